package dev.tandem.upstream;

import io.vertx.core.json.JsonObject;

/** A streamed chat completion as a client reads it: the content deltas, the finish reason, the chunk count. */
record ChatStream(String text, String finishReason, int chunks) {

    static ChatStream parse(String body) {
        StringBuilder text = new StringBuilder();
        String finish = null;
        int chunks = 0;
        boolean done = false;
        for (String event : body.split("\n\n")) {
            if (event.isBlank()) {
                continue;
            }
            String data = event.substring("data: ".length());
            if (data.equals("[DONE]")) {
                done = true;
                continue;
            }
            JsonObject chunk = new JsonObject(data);
            if (chunk.containsKey("error")) {
                throw new AssertionError("the stream carried an error: " + data);
            }
            if (chunk.getJsonArray("choices").isEmpty()) {
                continue;
            }
            JsonObject choice = chunk.getJsonArray("choices").getJsonObject(0);
            String content = choice.getJsonObject("delta", new JsonObject()).getString("content");
            if (content != null && !content.isEmpty()) {
                text.append(content);
                chunks++;
            }
            if (choice.getString("finish_reason") != null) {
                finish = choice.getString("finish_reason");
            }
        }
        if (!done) {
            throw new AssertionError("the stream did not end with [DONE]: " + body);
        }
        return new ChatStream(text.toString(), finish, chunks);
    }
}
