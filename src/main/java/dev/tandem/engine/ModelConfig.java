package dev.tandem.engine;

/**
 * Shape of a llama-architecture model, as in a llama2.c checkpoint header.
 *
 * @param sharedClassifier true when the token embedding doubles as the output head (tied weights)
 */
public record ModelConfig(
        int dim,
        int hiddenDim,
        int layers,
        int heads,
        int kvHeads,
        int vocabSize,
        int seqLen,
        boolean sharedClassifier) {

    public ModelConfig {
        if (dim <= 0 || hiddenDim <= 0 || layers <= 0 || heads <= 0 || kvHeads <= 0 || vocabSize <= 0 || seqLen <= 0) {
            throw new IllegalArgumentException("model dimensions must be positive: " + this);
        }
        if (dim % heads != 0 || heads % kvHeads != 0 || (dim / heads) % 2 != 0) {
            throw new IllegalArgumentException(
                    "dim must split into even-sized heads and heads into KV groups: " + this);
        }
    }

    public int headSize() {
        return dim / heads;
    }

    public int kvDim() {
        return kvHeads * headSize();
    }
}
