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

    /** A piece of raw text (no special token in it) into {@code out}; {@code afterSpecial} at the start too. */
    abstract void encodeRaw(String text, boolean afterSpecial, java.util.List<Integer> out);

    /** llama.cpp's order: BOS when the model adds one, then the text cut at special tokens, each raw piece encoded. */
    @Override
    public int[] encode(String text, boolean addBos) {
        java.util.List<Integer> out = new java.util.ArrayList<>();
        if (addBos && vocab.addBos() && vocab.bos() >= 0) {
            out.add(vocab.bos());
        }
        boolean afterSpecial = true;
        for (TokenVocabulary.Fragment f : vocab.splitSpecial(text)) {
            if (f.token() >= 0) {
                out.add(f.token());
                afterSpecial = true;
            } else {
                encodeRaw(f.text(), afterSpecial, out);
                afterSpecial = false;
            }
        }
        return out.stream().mapToInt(Integer::intValue).toArray();
    }

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
