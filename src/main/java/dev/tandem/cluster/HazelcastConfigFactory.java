package dev.tandem.cluster;

import com.hazelcast.config.Config;
import com.hazelcast.config.EvictionConfig;
import com.hazelcast.config.EvictionPolicy;
import com.hazelcast.config.InMemoryFormat;
import com.hazelcast.config.JavaSerializationFilterConfig;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.MapConfig;
import com.hazelcast.config.MaxSizePolicy;
import com.hazelcast.config.NearCacheConfig;
import com.hazelcast.config.NetworkConfig;
import com.hazelcast.config.XmlConfigBuilder;
import dev.tandem.config.ClusterSettings;
import dev.tandem.config.ConfigException;
import dev.tandem.config.RouterSettings;
import io.vertx.spi.cluster.hazelcast.ConfigUtil;
import java.io.IOException;
import java.util.List;

/**
 * Builds the Hazelcast member configuration: TCP-IP join with explicit members (multicast and
 * auto-detection off, so a laptop never joins a neighbour's cluster) plus Tandem's map settings.
 */
public final class HazelcastConfigFactory {
    private HazelcastConfigFactory() {}

    public static Config create(ClusterSettings cluster, RouterSettings router) {
        // Start from Vert.x's config so its own map settings (__vertx.*) stay in place.
        Config config = ConfigUtil.loadConfig();
        config.setClusterName(cluster.name());
        config.setProperty("hazelcast.phone.home.enabled", "false");
        config.setProperty("hazelcast.logging.type", "jdk");
        config.setProperty("hazelcast.shutdownhook.enabled", "false");
        // Hazelcast authenticates no member, and Java deserialization of what a member sends is a classic way
        // to run code: only Hazelcast's own, Vert.x's, the JDK's and Tandem's classes are deserialized.
        JavaSerializationFilterConfig filter = new JavaSerializationFilterConfig().setDefaultsDisabled(false);
        filter.getWhitelist().addPrefixes("dev.tandem.", "io.vertx.");
        config.getSerializationConfig().setJavaSerializationFilterConfig(filter);
        // Expired registry entries must be noticed within about a second, not the default five.
        config.setProperty("hazelcast.internal.map.expiration.task.period.seconds", "1");
        config.addMapConfig(new MapConfig(ClusterNames.WORKERS)
                .setInMemoryFormat(InMemoryFormat.OBJECT)
                .setBackupCount(1));
        config.addMapConfig(affinityMap(router));
        // A minute's counters are done with when the minute is; two more keep a late give-back harmless.
        config.addMapConfig(new MapConfig(ClusterNames.QUOTAS).setBackupCount(1).setTimeToLiveSeconds(180));
        if (!cluster.hazelcastConfig().isBlank()) {
            return withFile(config, cluster.hazelcastConfig());
        }
        config.setProperty("hazelcast.wait.seconds.before.join", "0");
        config.setProperty("hazelcast.max.wait.seconds.before.join", "0");

        NetworkConfig network = config.getNetworkConfig();
        network.setPort(cluster.port()).setPortAutoIncrement(true).setPortCount(100);
        network.setPublicAddress(null);
        network.getInterfaces().setEnabled(true).setInterfaces(List.of(cluster.host()));
        // Listen on that interface alone: by default Hazelcast binds every interface whatever it advertises.
        config.setProperty("hazelcast.socket.bind.any", "false");
        JoinConfig join = network.getJoin();
        join.getMulticastConfig().setEnabled(false);
        join.getAutoDetectionConfig().setEnabled(false);
        join.getKubernetesConfig().setEnabled(false);
        join.getAwsConfig().setEnabled(false);
        if (cluster.alone()) {
            // No join of any kind: the member forms its own cluster at once and looks for nobody.
            join.getTcpIpConfig().setEnabled(false);
            return config;
        }
        List<String> members = cluster.members().isEmpty() ? List.of(cluster.host()) : cluster.members();
        join.getTcpIpConfig().setEnabled(true).setMembers(members);
        return config;
    }

    /**
     * A Hazelcast XML file supplies the network and join settings (Kubernetes discovery, say) and any
     * properties; the cluster name and the maps stay Tandem's, so one file serves every role.
     */
    private static Config withFile(Config config, String path) {
        Config file;
        try {
            file = new XmlConfigBuilder(path).build();
        } catch (IOException | RuntimeException e) {
            throw new ConfigException("cannot read cluster.hazelcast-config " + path + ": " + e.getMessage());
        }
        file.getProperties().forEach((k, v) -> config.setProperty((String) k, (String) v));
        config.setNetworkConfig(file.getNetworkConfig());
        return config;
    }

    private static MapConfig affinityMap(RouterSettings router) {
        MapConfig map =
                new MapConfig(ClusterNames.AFFINITY).setBackupCount(1).setMaxIdleSeconds(router.affinityIdleSeconds());
        map.setEvictionConfig(new EvictionConfig()
                .setEvictionPolicy(EvictionPolicy.LRU)
                .setMaxSizePolicy(MaxSizePolicy.PER_NODE)
                .setSize(router.affinityMaxEntries()));
        // Routers read affinity on every request; the near cache keeps that read local.
        map.setNearCacheConfig(new NearCacheConfig(ClusterNames.AFFINITY)
                .setInMemoryFormat(InMemoryFormat.OBJECT)
                .setInvalidateOnChange(true)
                .setMaxIdleSeconds(router.affinityIdleSeconds())
                .setEvictionConfig(new EvictionConfig()
                        .setEvictionPolicy(EvictionPolicy.LRU)
                        .setMaxSizePolicy(MaxSizePolicy.ENTRY_COUNT)
                        .setSize(Math.min(router.affinityMaxEntries(), 1_000_000))));
        return map;
    }
}
