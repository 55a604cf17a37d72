package dev.tandem.cluster;

import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import dev.tandem.engine.tokenizer.Tokenizer;
import dev.tandem.engine.tokenizer.TokenizerIdentity;
import dev.tandem.engine.tokenizer.TokenizerImages;
import java.io.IOException;
import java.util.logging.Logger;

/**
 * The cluster's tokenizers, by identity: a worker files its model's tokenizer before it registers, so a
 * router that never loaded the model can tokenize for it. An entry is its key's content (the identity
 * is a hash of the vocabulary), so it is written once and never changes; a few hundred KiB per
 * vocabulary. All calls block: worker threads only.
 */
public final class TokenizerStore {
    private static final Logger LOG = Logger.getLogger(TokenizerStore.class.getName());

    private final IMap<String, byte[]> map;

    public TokenizerStore(HazelcastInstance hazelcast) {
        this.map = hazelcast.getMap(ClusterNames.TOKENIZERS);
    }

    /**
     * Files a tokenizer under its identity unless it is there already. A kind of tokenizer that has no
     * image is not filed (logged): routers then serve its model only when they load it themselves.
     */
    public void publish(String identity, Tokenizer tokenizer) {
        if (map.containsKey(identity)) {
            return;
        }
        byte[] image;
        try {
            image = TokenizerImages.of(tokenizer);
        } catch (IllegalArgumentException e) {
            LOG.warning("tokenizer " + identity + " not shared with routers (" + e.getMessage()
                    + "): routers serve this model only with --model");
            return;
        }
        map.putIfAbsent(identity, image);
    }

    /**
     * The tokenizer filed under {@code identity}, or null when nobody filed it. An image that does not read
     * back, or reads back as another vocabulary, is an {@link IOException}: never tokenize with it.
     */
    public Tokenizer fetch(String identity) throws IOException {
        byte[] image = map.get(identity);
        if (image == null) {
            return null;
        }
        Tokenizer tokenizer = TokenizerImages.read(image);
        String actual = TokenizerIdentity.of(tokenizer);
        if (!actual.equals(identity)) {
            throw new IOException("the tokenizer filed as " + identity + " is " + actual);
        }
        return tokenizer;
    }
}
