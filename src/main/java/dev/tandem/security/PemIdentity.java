package dev.tandem.security;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.core.net.PemTrustOptions;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import javax.net.ssl.X509KeyManager;

/**
 * A private key and its certificate chain from PEM (Vert.x's parser: PKCS#8, PKCS#1 and SEC1 keys), checked to
 * belong together — a certificate rotated before its key would otherwise fail every handshake.
 */
public record PemIdentity(PrivateKey key, List<X509Certificate> chain) {

    /** Parses and checks; throws {@link GeneralSecurityException} with a reason a person can act on. */
    public static PemIdentity parse(Vertx vertx, Buffer cert, Buffer key) throws GeneralSecurityException {
        X509KeyManager manager;
        try {
            manager = (X509KeyManager) new PemKeyCertOptions()
                    .setCertValue(cert)
                    .setKeyValue(key)
                    .getKeyManagerFactory(vertx)
                    .getKeyManagers()[0];
        } catch (Exception e) {
            throw new GeneralSecurityException("cannot read the certificate and key: " + e.getMessage(), e);
        }
        String alias = firstAlias(manager);
        PemIdentity identity =
                new PemIdentity(manager.getPrivateKey(alias), List.of(manager.getCertificateChain(alias)));
        identity.checkPair();
        return identity;
    }

    private static String firstAlias(X509KeyManager manager) throws GeneralSecurityException {
        for (String type : new String[] {"RSA", "EC", "EdDSA", "Ed25519", "DSA"}) {
            String[] aliases = manager.getServerAliases(type, null);
            if (aliases != null && aliases.length > 0) {
                return aliases[0];
            }
        }
        throw new GeneralSecurityException("no private key with a certificate found");
    }

    /** The key signs and the leaf's public key verifies, or the two do not belong together. */
    private void checkPair() throws GeneralSecurityException {
        byte[] probe = "tandem key check".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        String algorithm = signatureAlgorithm(key);
        Signature signer = Signature.getInstance(algorithm);
        signer.initSign(key);
        signer.update(probe);
        byte[] sig = signer.sign();
        Signature verifier = Signature.getInstance(algorithm);
        verifier.initVerify(leaf().getPublicKey());
        verifier.update(probe);
        if (!verifier.verify(sig)) {
            throw new GeneralSecurityException("the private key does not belong to the certificate "
                    + leaf().getSubjectX500Principal().getName());
        }
    }

    public X509Certificate leaf() {
        return chain.get(0);
    }

    /** The JCA signature algorithm for a key of this type (SHA-256 based). */
    public static String signatureAlgorithm(java.security.Key key) throws GeneralSecurityException {
        return switch (key.getAlgorithm()) {
            case "RSA" -> "SHA256withRSA";
            case "EC" -> "SHA256withECDSA";
            case "EdDSA", "Ed25519" -> "Ed25519";
            default -> throw new GeneralSecurityException("unsupported key type " + key.getAlgorithm());
        };
    }

    /** The CA certificates of a PEM bundle, as trust anchors. */
    public static List<X509Certificate> authorities(Vertx vertx, Buffer pem) throws GeneralSecurityException {
        try {
            KeyStore store = new PemTrustOptions().addCertValue(pem).loadKeyStore(vertx);
            List<X509Certificate> out = new ArrayList<>();
            for (String alias : Collections.list(store.aliases())) {
                if (store.getCertificate(alias) instanceof X509Certificate c) {
                    out.add(c);
                }
            }
            if (out.isEmpty()) {
                throw new GeneralSecurityException("no certificate in the CA file");
            }
            return List.copyOf(out);
        } catch (GeneralSecurityException e) {
            throw e;
        } catch (Exception e) {
            throw new GeneralSecurityException("cannot read the CA file: " + e.getMessage(), e);
        }
    }
}
