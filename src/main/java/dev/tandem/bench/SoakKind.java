package dev.tandem.bench;

import java.util.Locale;

/** How a soak request travels: which endpoint, streamed or not. Cancels are a flag on the streamed ones. */
enum SoakKind {
    SSE_COMPLETION(false, true, false),
    JSON_COMPLETION(false, false, false),
    SSE_CHAT(true, true, false),
    JSON_CHAT(true, false, false),
    WS_COMPLETION(false, true, true),
    WS_CHAT(true, true, true);

    final boolean chat;
    final boolean streamed;
    final boolean webSocket;

    SoakKind(boolean chat, boolean streamed, boolean webSocket) {
        this.chat = chat;
        this.streamed = streamed;
        this.webSocket = webSocket;
    }

    /** The name in summary.json: {@code sse_completion}, {@code ws_chat}, … */
    String key() {
        return name().toLowerCase(Locale.ROOT);
    }
}
