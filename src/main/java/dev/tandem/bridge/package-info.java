/**
 * Event-bus bridges: how programs that are not HTTP clients reach a router. What the TCP bridges share
 * lives here — the Vert.x TCP bridge framing ({@code BridgeFrameReader}, {@code BridgeFrames}) and one
 * socket's handling ({@code BridgeSocket}); each concern has its own package:
 * {@link dev.tandem.bridge.client} for client programs (TCP and SockJS), {@link dev.tandem.bridge.worker}
 * for prefill and decode workers in other processes and languages, {@link dev.tandem.bridge.console}
 * for the web console's live cluster view.
 */
package dev.tandem.bridge;
