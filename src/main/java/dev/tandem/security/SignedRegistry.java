package dev.tandem.security;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.PublicKey;
import java.security.Signature;
import java.security.cert.CertPathValidator;
import java.security.cert.CertificateFactory;
import java.security.cert.PKIXParameters;
import java.security.cert.TrustAnchor;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import java.util.logging.Logger;
import java.util.stream.Collectors;

/**
 * Registry entries signed with the writing member's cluster certificate key. The stored value is
 * <pre>{"entry": "...", "key": "...", "signed_at": ms, "chain": [base64 DER, leaf first], "signature": base64}</pre>
 * and the signature covers the map key, the time and the entry, so an entry copied under another worker's
 * key, altered, or replayed long after it was written does not verify. A chain is checked against the
 * cluster CA once and remembered (members re-sign every heartbeat with the same certificate).
 */
public final class SignedRegistry implements RegistrySeal {
    private static final Logger LOG = Logger.getLogger(SignedRegistry.class.getName());
    /** How far a signature's time may be from this member's clock: replays older than this are refused. */
    static final long MAX_AGE_MS = 10 * 60_000L;
    /** Chains remembered as verified; more certificates than this in a cluster just costs re-validation. */
    private static final int MAX_CACHED_CHAINS = 4096;
    /** Refusals are logged once per key in this long. */
    private static final long LOG_EVERY_MS = 60_000L;

    private final PemIdentity self;
    private final JsonArray selfChain;
    private final Set<TrustAnchor> anchors;
    private final LongSupplier clock;
    private final Map<String, PublicKey> verifiedChains = new ConcurrentHashMap<>();
    private final Map<String, Long> lastLogged = new ConcurrentHashMap<>();

    public SignedRegistry(PemIdentity self, List<X509Certificate> authorities, LongSupplier clock) {
        this.self = self;
        this.clock = clock;
        this.anchors = authorities.stream().map(c -> new TrustAnchor(c, null)).collect(Collectors.toUnmodifiableSet());
        JsonArray chain = new JsonArray();
        try {
            for (X509Certificate c : self.chain()) {
                chain.add(Base64.getEncoder().encodeToString(c.getEncoded()));
            }
            validate(chain); // our own certificate must be one our peers accept
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cluster.tls-cert is not issued by cluster.tls-ca: " + e.getMessage(), e);
        }
        this.selfChain = chain;
    }

    @Override
    public String seal(String key, String entryJson) {
        long at = clock.getAsLong();
        try {
            Signature signer = Signature.getInstance(PemIdentity.signatureAlgorithm(self.key()));
            signer.initSign(self.key());
            signer.update(material(key, at, entryJson));
            return new JsonObject()
                    .put("entry", entryJson)
                    .put("key", key)
                    .put("signed_at", at)
                    .put("chain", selfChain)
                    .put("signature", Base64.getEncoder().encodeToString(signer.sign()))
                    .encode();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot sign a registry entry: " + e.getMessage(), e);
        }
    }

    @Override
    public String open(String key, String stored) {
        try {
            JsonObject sealed = new JsonObject(stored);
            if (!sealed.containsKey("signature") || !sealed.containsKey("signed_at")) {
                return refuse(key, "it is not signed");
            }
            String entry = sealed.getString("entry");
            long at = sealed.getLong("signed_at");
            if (entry == null || !key.equals(sealed.getString("key"))) {
                return refuse(key, "it is signed for another key");
            }
            if (Math.abs(clock.getAsLong() - at) > MAX_AGE_MS) {
                return refuse(key, "its signature is from " + at + ", more than " + MAX_AGE_MS + " ms from now");
            }
            PublicKey signer = validate(sealed.getJsonArray("chain"));
            Signature verifier = Signature.getInstance(PemIdentity.signatureAlgorithm(signer));
            verifier.initVerify(signer);
            verifier.update(material(key, at, entry));
            if (!verifier.verify(Base64.getDecoder().decode(sealed.getString("signature")))) {
                return refuse(key, "its signature does not verify");
            }
            return entry;
        } catch (GeneralSecurityException | RuntimeException e) {
            return refuse(key, "it is not signed by a certificate of the cluster CA (" + e.getMessage() + ")");
        }
    }

    /** The signer's key when the chain leads to a cluster CA (cached per chain). */
    private PublicKey validate(JsonArray chain) throws GeneralSecurityException {
        String id = chain.encode();
        PublicKey known = verifiedChains.get(id);
        if (known != null) {
            return known;
        }
        CertificateFactory factory = CertificateFactory.getInstance("X.509");
        List<X509Certificate> certs = new ArrayList<>();
        for (int i = 0; i < chain.size(); i++) {
            certs.add((X509Certificate) factory.generateCertificate(
                    new java.io.ByteArrayInputStream(Base64.getDecoder().decode(chain.getString(i)))));
        }
        if (certs.isEmpty()) {
            throw new GeneralSecurityException("no certificate");
        }
        PKIXParameters params = new PKIXParameters(anchors);
        params.setRevocationEnabled(false);
        CertPathValidator.getInstance("PKIX").validate(factory.generateCertPath(certs), params);
        PublicKey key = certs.get(0).getPublicKey();
        if (verifiedChains.size() >= MAX_CACHED_CHAINS) {
            verifiedChains.clear();
        }
        verifiedChains.put(id, key);
        return key;
    }

    private static byte[] material(String key, long at, String entry) {
        return (key + "\n" + at + "\n" + entry).getBytes(StandardCharsets.UTF_8);
    }

    private String refuse(String key, String why) {
        long now = clock.getAsLong();
        Long last = lastLogged.get(key);
        if (last == null || now - last >= LOG_EVERY_MS) {
            lastLogged.put(key, now);
            if (lastLogged.size() > MAX_CACHED_CHAINS) {
                lastLogged.clear();
            }
            LOG.warning("registry entry '" + key + "' ignored: " + why
                    + " — a process that reached the Hazelcast port without the cluster certificate?");
        }
        return null;
    }
}
