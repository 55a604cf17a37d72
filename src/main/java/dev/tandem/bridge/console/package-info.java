/** The web console's live cluster view, published over the SockJS bridge while someone watches. */
package dev.tandem.bridge.console;
