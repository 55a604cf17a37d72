package dev.tandem.engine.tokenizer;

/**
 * What the tokenizers of a GGUF vocabulary share: the vocabulary, each token's bytes as it decodes, and
 * the special ids. Subclasses encode (SentencePiece or byte-level BPE) and say how a token decodes.
 */
abstract class VocabularyTokenizer implements Tokenizer {
    final TokenVocabulary vocab;
    /** Each token's bytes in the output text (control tokens: none). */
    final byte[][] pieces;

    private final int maxTokenBytes;

    VocabularyTokenizer(TokenVocabulary vocab) {
        this.vocab = vocab;
        this.pieces = new byte[vocab.size()][];
        int max = 1;
        for (int i = 0; i < vocab.size(); i++) {
            pieces[i] = piece(vocab, i);
            max = Math.max(max, pieces[i].length);
        }
        this.maxTokenBytes = max;
    }

    /** Token {@code id}'s bytes as llama.cpp's {@code token_to_piece} gives them without specials. */
    abstract byte[] piece(TokenVocabulary vocab, int id);

    @Override
    public byte[] decode(int previousToken, int token) {
        return pieces[vocab.check(token)].clone();
    }

    @Override
    public int vocabSize() {
        return vocab.size();
    }

    @Override
    public int bos() {
        return vocab.bos();
    }

    @Override
    public int eos() {
        return vocab.eos();
    }

    @Override
    public int maxTokenBytes() {
        return maxTokenBytes;
    }

    @Override
    public boolean isEndOfSequence(int token) {
        return vocab.endOfGeneration().contains(token);
    }

    @Override
    public long footprintBytes() {
        long bytes = vocab.footprintBytes();
        for (byte[] p : pieces) {
            bytes += 16 + p.length;
        }
        return bytes;
    }
}
