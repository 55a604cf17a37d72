package dev.tandem.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import dev.tandem.config.ClusterSettings;
import dev.tandem.config.ConfigException;
import dev.tandem.config.TandemConfig;
import dev.tandem.config.TestSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HazelcastConfigFactoryTest {
    private final TandemConfig defaults = TandemConfig.defaults();

    @Test
    void joinsOnlyByTcpIpNeverByMulticast() {
        Config config = HazelcastConfigFactory.create(defaults.cluster(), defaults.router());
        JoinConfig join = config.getNetworkConfig().getJoin();
        assertFalse(join.getMulticastConfig().isEnabled());
        assertFalse(join.getAutoDetectionConfig().isEnabled());
        assertTrue(join.getTcpIpConfig().isEnabled());
        assertEquals(List.of("127.0.0.1"), join.getTcpIpConfig().getMembers());
        assertEquals(
                List.of("127.0.0.1"),
                List.copyOf(config.getNetworkConfig().getInterfaces().getInterfaces()));
    }

    @Test
    void aClusterOfOneJoinsNobodyUnderANameNobodyShares() {
        ClusterSettings defaults = TandemConfigHolder.DEFAULTS.cluster();
        assertTrue(defaults.joinsNobody(), "the shipped defaults name no member");
        ClusterSettings one = defaults.asClusterOfOne();
        ClusterSettings other = defaults.asClusterOfOne();
        Config config = HazelcastConfigFactory.create(one, TandemConfigHolder.DEFAULTS.router());
        JoinConfig join = config.getNetworkConfig().getJoin();
        assertFalse(join.getTcpIpConfig().isEnabled());
        assertFalse(join.getMulticastConfig().isEnabled());
        assertFalse(join.getAutoDetectionConfig().isEnabled());
        assertTrue(one.name().startsWith(defaults.name() + "-"), one.name());
        assertFalse(one.name().equals(other.name()), "two processes, two names");
        assertEquals(one.name(), config.getClusterName());
        assertFalse(defaults.withMembers(List.of("10.0.0.1:5701")).joinsNobody());
        assertFalse(TestSettings.withHazelcastConfig(defaults, "conf/cluster-k8s.xml")
                .joinsNobody());
    }

    @Test
    void usesTheConfiguredNameAndMembers() {
        ClusterSettings cluster =
                new ClusterSettings("prod", "10.0.0.5", 5801, List.of("10.0.0.6:5801", "10.0.0.7:5801"));
        Config config = HazelcastConfigFactory.create(cluster, defaults.router());
        assertEquals("prod", config.getClusterName());
        assertEquals(5801, config.getNetworkConfig().getPort());
        assertEquals(
                cluster.members(),
                config.getNetworkConfig().getJoin().getTcpIpConfig().getMembers());
    }

    @Test
    void affinityMapIsBoundedExpiresAndIsNearCached() {
        Config config = HazelcastConfigFactory.create(defaults.cluster(), defaults.router());
        var map = config.getMapConfig(ClusterNames.AFFINITY);
        assertEquals(defaults.router().affinityIdleSeconds(), map.getMaxIdleSeconds());
        assertEquals(
                defaults.router().affinityMaxEntries(), map.getEvictionConfig().getSize());
        assertTrue(map.getNearCacheConfig() != null && map.getNearCacheConfig().isInvalidateOnChange());
    }

    @Test
    void aHazelcastXmlSuppliesNetworkAndJoinWhileNameAndMapsStayTandems(@TempDir Path dir) throws Exception {
        Path xml = dir.resolve("cluster.xml");
        Files.writeString(xml, """
        <hazelcast xmlns="http://www.hazelcast.com/schema/config"
                   xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
                   xsi:schemaLocation="http://www.hazelcast.com/schema/config
                   http://www.hazelcast.com/schema/config/hazelcast-config-5.6.xsd">
          <cluster-name>ignored</cluster-name>
          <properties><property name="hazelcast.max.no.heartbeat.seconds">7</property></properties>
          <network>
            <port auto-increment="false">6801</port>
            <join>
              <multicast enabled="false"/>
              <tcp-ip enabled="true"><member>10.1.2.3:6801</member></tcp-ip>
            </join>
          </network>
        </hazelcast>
        """);
        ClusterSettings cluster =
                TestSettings.withHazelcastConfig(defaults.cluster().withName("prod"), xml.toString());
        Config config = HazelcastConfigFactory.create(cluster, defaults.router());
        assertEquals("prod", config.getClusterName());
        assertEquals(6801, config.getNetworkConfig().getPort());
        assertEquals(
                List.of("10.1.2.3:6801"),
                config.getNetworkConfig().getJoin().getTcpIpConfig().getMembers());
        assertEquals("7", config.getProperty("hazelcast.max.no.heartbeat.seconds"));
        assertEquals(
                defaults.router().affinityIdleSeconds(),
                config.getMapConfig(ClusterNames.AFFINITY).getMaxIdleSeconds());
        assertTrue(config.getMapConfigs().containsKey(ClusterNames.WORKERS));
    }

    @Test
    void aMissingHazelcastXmlNamesTheKey() {
        ClusterSettings cluster = TestSettings.withHazelcastConfig(defaults.cluster(), "/nonexistent/cluster.xml");
        ConfigException e =
                assertThrows(ConfigException.class, () -> HazelcastConfigFactory.create(cluster, defaults.router()));
        assertTrue(e.getMessage().contains("cluster.hazelcast-config"), e.getMessage());
    }

    /** The shipped defaults, read once. */
    private static final class TandemConfigHolder {
        static final TandemConfig DEFAULTS = TandemConfig.defaults();
    }
}
