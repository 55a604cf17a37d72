/**
 * Event-bus bridges for programs that are not HTTP clients. A client connects to its router's bridge,
 * registers an address of its own under {@code tandem.client.}, sends requests to
 * {@code tandem.generate} and receives their tokens on that address. {@link dev.tandem.bridge.ClientBridge}
 * is what a router starts; {@code TcpBridgeServer} speaks the Vert.x TCP bridge protocol;
 * {@code BridgeRequests} runs the requests with the same parser and router as the HTTP API.
 */
package dev.tandem.bridge;
