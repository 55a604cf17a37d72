package dev.tandem.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.config.Config;
import com.hazelcast.config.InvalidConfigurationException;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.NetworkConfig;
import com.hazelcast.config.XmlConfigBuilder;
import com.hazelcast.config.properties.PropertyDefinition;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.kubernetes.KubernetesProperties;
import dev.tandem.cluster.LoopbackClusterPorts;
import io.fabric8.kubernetes.api.model.Service;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * conf/cluster-local.xml and conf/cluster-k8s.xml, read by Hazelcast's own XmlConfigBuilder (which
 * validates against hazelcast-config-5.6.xsd): local joins by TCP-IP on loopback only; k8s by the
 * Kubernetes plugin, looking for exactly the headless Service that k8s/base defines.
 */
class ClusterXmlConfigTest {
    static final Path LOCAL = Path.of("conf", "cluster-local.xml");
    static final Path K8S_XML = Path.of("conf", "cluster-k8s.xml");

    /** What HazelcastConfigFactory sets on the built-in config; both files carry the same. */
    static final Map<String, String> TANDEM_PROPERTIES = Map.of(
            "hazelcast.phone.home.enabled", "false",
            "hazelcast.logging.type", "jdk",
            "hazelcast.shutdownhook.enabled", "false",
            "hazelcast.wait.seconds.before.join", "0",
            "hazelcast.max.wait.seconds.before.join", "0",
            "hazelcast.internal.map.expiration.task.period.seconds", "1");

    @Test
    void localJoinsByTcpIpOnLoopbackOnly() throws IOException {
        Config config = new XmlConfigBuilder(LOCAL.toString()).build();
        NetworkConfig network = config.getNetworkConfig();
        JoinConfig join = network.getJoin();
        assertTrue(join.getTcpIpConfig().isEnabled());
        assertEquals(List.of("127.0.0.1"), join.getTcpIpConfig().getMembers());
        assertFalse(join.getMulticastConfig().isEnabled(), "multicast");
        assertFalse(join.getAutoDetectionConfig().isEnabled(), "auto-detection");
        assertFalse(join.getKubernetesConfig().isEnabled(), "kubernetes");
        assertTrue(network.getInterfaces().isEnabled());
        assertEquals(List.of("127.0.0.1"), List.copyOf(network.getInterfaces().getInterfaces()));
        assertEquals(5701, network.getPort());
        assertTrue(network.isPortAutoIncrement());
        assertProperties(config);
        assertEquals("dev", config.getClusterName(), "left at Hazelcast's default, so Tandem's cluster.name applies");
        assertTrue(
                config.getMapConfigs().isEmpty(),
                "Tandem adds its maps itself: " + config.getMapConfigs().keySet());
    }

    @Test
    void kubernetesDiscoversTheHeadlessServiceOfK8s() throws IOException {
        Config config = new XmlConfigBuilder(K8S_XML.toString()).build();
        JoinConfig join = config.getNetworkConfig().getJoin();
        assertTrue(join.getKubernetesConfig().isEnabled(), "kubernetes");
        assertFalse(join.getMulticastConfig().isEnabled(), "multicast");
        assertFalse(join.getTcpIpConfig().isEnabled(), "tcp-ip");
        assertFalse(join.getAutoDetectionConfig().isEnabled(), "auto-detection");
        assertFalse(config.getNetworkConfig().getInterfaces().isEnabled(), "a pod's IP is not known in advance");
        assertEquals(5701, config.getNetworkConfig().getPort());
        assertProperties(config);
        assertEquals("dev", config.getClusterName());
        assertTrue(
                config.getMapConfigs().isEmpty(),
                "Tandem adds its maps itself: " + config.getMapConfigs().keySet());

        // Every discovery property is one the Kubernetes plugin knows (the XSD accepts any element there).
        Map<String, String> props = join.getKubernetesConfig().getProperties();
        Set<String> known = kubernetesPropertyKeys();
        for (String key : props.keySet()) {
            assertTrue(
                    known.contains(key), "unknown Kubernetes discovery property '" + key + "' (known: " + known + ")");
        }
        // API mode by service label: no DNS lookup, no service name, so the label alone selects.
        assertFalse(props.containsKey("service-dns"));
        assertFalse(props.containsKey("service-name"));

        // ... and it names the headless Service of k8s/base, in the namespace it deploys into.
        K8sManifests m = K8sManifests.load(K8sManifestsTest.K8S);
        assertEquals(m.namespace(), props.get("namespace"));
        List<Service> labelled = m.all(Service.class).stream()
                .filter(s -> s.getMetadata().getLabels() != null
                        && props.get("service-label-value")
                                .equals(s.getMetadata().getLabels().get(props.get("service-label-name"))))
                .toList();
        assertEquals(
                1,
                labelled.size(),
                "one Service carries " + props.get("service-label-name") + "=" + props.get("service-label-value"));
        Service hz = labelled.get(0);
        assertEquals("None", hz.getSpec().getClusterIP());
        assertEquals(
                config.getNetworkConfig().getPort(),
                hz.getSpec().getPorts().get(0).getPort());
    }

    @Test
    void schemaValidationRejectsAMisspelledElement() throws IOException {
        String xml = Files.readString(LOCAL);
        assertThrows(
                InvalidConfigurationException.class,
                () -> build(xml.replace("<tcp-ip enabled=\"true\">", "<tcp-ipp enabled=\"true\">")
                        .replace("</tcp-ip>", "</tcp-ipp>")));
        assertThrows(
                InvalidConfigurationException.class,
                () -> build(xml.replace("<multicast enabled=\"false\"/>", "<multicast enabled=\"nope\"/>")));
        build(xml); // the unbroken file still reads
    }

    /**
     * The local file is not only valid but works: two members started from it form one cluster. Only
     * the port moves (to a free one, and the second member is pointed at it), so members of clusters
     * that other processes on this machine run on 5701-5703 cannot crowd the test out.
     */
    @Test
    void twoMembersFromTheLocalFileFormOneCluster() throws IOException {
        String name = "xml-" + UUID.randomUUID();
        int port = LoopbackClusterPorts.base(4);
        HazelcastInstance a = null;
        HazelcastInstance b = null;
        try {
            a = Hazelcast.newHazelcastInstance(localOn(port, name));
            b = Hazelcast.newHazelcastInstance(localOn(port, name));
            assertEquals(2, a.getCluster().getMembers().size());
            assertEquals(2, b.getCluster().getMembers().size());
            assertEquals(
                    "127.0.0.1", b.getCluster().getLocalMember().getAddress().getHost());
        } finally {
            if (b != null) {
                b.shutdown();
            }
            if (a != null) {
                a.shutdown();
            }
        }
    }

    private static Config localOn(int port, String clusterName) throws IOException {
        Config config = new XmlConfigBuilder(LOCAL.toString()).build().setClusterName(clusterName);
        config.getNetworkConfig().setPort(port);
        config.getNetworkConfig().getJoin().getTcpIpConfig().setMembers(List.of("127.0.0.1:" + port));
        return config;
    }

    private static Config build(String xml) {
        return new XmlConfigBuilder(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8))).build();
    }

    private static void assertProperties(Config config) {
        TANDEM_PROPERTIES.forEach((k, v) -> assertEquals(v, config.getProperty(k), k));
    }

    private static Set<String> kubernetesPropertyKeys() {
        Set<String> keys = new TreeSet<>();
        for (Field f : KubernetesProperties.class.getFields()) {
            if (Modifier.isStatic(f.getModifiers()) && PropertyDefinition.class.isAssignableFrom(f.getType())) {
                try {
                    keys.add(((PropertyDefinition) f.get(null)).key());
                } catch (IllegalAccessException e) {
                    throw new IllegalStateException(e);
                }
            }
        }
        return keys;
    }
}
