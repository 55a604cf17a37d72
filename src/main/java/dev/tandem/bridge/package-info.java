/**
 * Event-bus bridges for programs that are not HTTP clients. A client connects to its router's bridge,
 * registers an address of its own under {@code tandem.client.}, sends requests to
 * {@code tandem.generate} and receives their tokens on that address. {@link dev.tandem.bridge.ClientBridge}
 * is what a router starts; {@code TcpBridgeServer} speaks the Vert.x TCP bridge protocol;
 * {@code SockJsBridge} serves browsers at {@code /eventbus} through Vert.x's SockJS bridge;
 * {@code BridgeRequests} runs the requests with the same parser and router as the HTTP API, whichever
 * bridge they came through; {@link dev.tandem.bridge.ConsoleFeed} publishes the web console's cluster view.
 */
package dev.tandem.bridge;
