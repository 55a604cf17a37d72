package dev.tandem.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import dev.tandem.config.ClusterSettings;
import dev.tandem.config.TandemConfig;
import java.util.List;
import org.junit.jupiter.api.Test;

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
    assertEquals(List.of("127.0.0.1"), List.copyOf(config.getNetworkConfig().getInterfaces().getInterfaces()));
  }

  @Test
  void usesTheConfiguredNameAndMembers() {
    ClusterSettings cluster = new ClusterSettings("prod", "10.0.0.5", 5801, List.of("10.0.0.6:5801", "10.0.0.7:5801"));
    Config config = HazelcastConfigFactory.create(cluster, defaults.router());
    assertEquals("prod", config.getClusterName());
    assertEquals(5801, config.getNetworkConfig().getPort());
    assertEquals(cluster.members(), config.getNetworkConfig().getJoin().getTcpIpConfig().getMembers());
  }

  @Test
  void affinityMapIsBoundedExpiresAndIsNearCached() {
    Config config = HazelcastConfigFactory.create(defaults.cluster(), defaults.router());
    var map = config.getMapConfig(ClusterNames.AFFINITY);
    assertEquals(defaults.router().affinityIdleSeconds(), map.getMaxIdleSeconds());
    assertEquals(defaults.router().affinityMaxEntries(), map.getEvictionConfig().getSize());
    assertTrue(map.getNearCacheConfig() != null && map.getNearCacheConfig().isInvalidateOnChange());
  }
}
