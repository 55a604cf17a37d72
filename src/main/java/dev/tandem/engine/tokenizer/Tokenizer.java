package dev.tandem.engine.tokenizer;

/** Text ↔ token ids for one model. Implementations are immutable and thread-safe. */
public interface Tokenizer {

    int vocabSize();

    int bos();

    int eos();

    /** Encodes text; {@code addBos} puts the BOS token first (as a prompt gets). */
    int[] encode(String text, boolean addBos);

    /**
     * The bytes a token contributes to the output text, given the token before it (llama2.c drops the
     * leading space of the first piece after BOS). Special tokens contribute no bytes.
     */
    byte[] decode(int previousToken, int token);

    /** The most bytes of text one token stands for: bounds how many tokens a text can need, before encoding it. */
    int maxTokenBytes();

    /** True for tokens that end a generated sequence. */
    boolean isEndOfSequence(int token);

    /**
     * About how much heap this tokenizer holds (its vocabulary and lookup tables): what a router that
     * learns it from the cluster draws from its memory budget. 0 for one shared by every model.
     */
    default long footprintBytes() {
        return 0;
    }

    /** False when {@link #encode} waits on another process (a server's {@code /tokenize}): never on an event loop. */
    default boolean encodesInProcess() {
        return true;
    }
}
