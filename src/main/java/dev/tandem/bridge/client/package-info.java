/**
 * The client bridges of one router. A client connects over TCP ({@code TcpClientBridge}) or SockJS
 * ({@code SockJsClientBridge}, browsers at {@code /eventbus}), registers an address of its own under
 * {@code tandem.client.}, sends requests to {@code tandem.generate} and receives their tokens on that
 * address. {@code ClientRequests} runs those requests with the HTTP API's parser and the same router;
 * {@code BridgeClientSink} is where a bridge client's tokens are sent. {@link dev.tandem.bridge.client.ClientBridges}
 * is what a router node starts.
 */
package dev.tandem.bridge.client;
