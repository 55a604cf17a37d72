package dev.tandem.engine.tokenizer;

import java.util.List;
import java.util.Map;

/**
 * Renders a chat into the prompt text a model was trained to continue. Owned by the model: the
 * engine says which template its model uses.
 */
public interface ChatTemplate {

    String name();

    /** The prompt for the assistant's next turn. */
    String render(List<ChatMessage> messages);

    /**
     * The prompt for a whole chat request. Templates of their own ({@link JinjaChatTemplate}) use
     * tools, add_generation_prompt, continue_final_message and the kwargs; the built-in ones render
     * the messages only.
     */
    default String render(ChatPrompt prompt) {
        return render(prompt.messages());
    }

    /**
     * The chat's token ids when a server applies the template ({@link UpstreamChatTemplate}), else
     * null: the caller renders and tokenizes. Blocking when not null.
     */
    default int[] encodeOnServer(ChatPrompt prompt) {
        return null;
    }

    /** The Jinja source of a model's own template, or null for the built-in ones (known by name). */
    default String source() {
        return null;
    }

    /** The special tokens a model's own template is given (bos_token, eos_token, …). */
    default Map<String, String> specialTokens() {
        return Map.of();
    }

    /**
     * Tandem's default, for models without a template of their own (the built-in model): each turn
     * as {@code <|role|>\n} + content + {@code \n}, then {@code <|assistant|>\n} for the reply.
     */
    ChatTemplate ROLE_TAGS = new ChatTemplate() {
        @Override
        public String name() {
            return "role-tags";
        }

        @Override
        public String render(List<ChatMessage> messages) {
            StringBuilder sb = new StringBuilder();
            for (ChatMessage m : messages) {
                sb.append("<|")
                        .append(m.role())
                        .append("|>\n")
                        .append(m.content())
                        .append('\n');
            }
            return sb.append("<|assistant|>\n").toString();
        }
    };

    /**
     * Llama 2's chat format: {@code [INST] <<SYS>>\nsystem\n<</SYS>>\n\nuser [/INST] assistant} …
     * (BOS is added by the tokenizer; earlier turns are closed with {@code </s><s>} as text).
     */
    ChatTemplate LLAMA2 = new ChatTemplate() {
        @Override
        public String name() {
            return "llama2";
        }

        @Override
        public String render(List<ChatMessage> messages) {
            StringBuilder sb = new StringBuilder();
            String system = null;
            boolean first = true;
            for (ChatMessage m : messages) {
                switch (m.role()) {
                    case "system", "developer" -> system = system == null ? m.content() : system + "\n" + m.content();
                    case "assistant" -> sb.append(' ').append(m.content()).append(" </s><s>");
                    default -> {
                        sb.append("[INST] ");
                        if (first && system != null) {
                            sb.append("<<SYS>>\n").append(system).append("\n<</SYS>>\n\n");
                        }
                        sb.append(m.content().strip()).append(" [/INST]");
                        first = false;
                    }
                }
            }
            return sb.toString();
        }
    };

    /** The template of that name ({@link #ROLE_TAGS}, {@link #LLAMA2}), or null when there is none. */
    static ChatTemplate named(String name) {
        for (ChatTemplate t : List.of(ROLE_TAGS, LLAMA2)) {
            if (t.name().equals(name)) {
                return t;
            }
        }
        return null;
    }
}
