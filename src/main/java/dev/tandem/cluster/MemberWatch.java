package dev.tandem.cluster;

import com.hazelcast.cluster.Member;
import com.hazelcast.cluster.MembershipEvent;
import com.hazelcast.cluster.MembershipListener;
import com.hazelcast.core.HazelcastInstance;
import java.util.UUID;
import java.util.function.Consumer;

/**
 * Tells when a cluster member leaves — crashed, killed or shut down. The hard evidence of death:
 * whatever a member owned (workers, requests, load) can be given up at once instead of waiting for a
 * heartbeat to lapse.
 */
public final class MemberWatch {
    private final HazelcastInstance hazelcast;
    private UUID registration;

    private MemberWatch(HazelcastInstance hazelcast) {
        this.hazelcast = hazelcast;
    }

    /**
     * Calls {@code onLeft} with the node id (member UUID) of every member that leaves, on a Hazelcast
     * thread: hop to your own context. Registering may block briefly; not from an event loop.
     */
    public static MemberWatch onLeave(HazelcastInstance hazelcast, Consumer<String> onLeft) {
        MemberWatch watch = new MemberWatch(hazelcast);
        watch.registration = hazelcast.getCluster().addMembershipListener(new MembershipListener() {
            @Override
            public void memberAdded(MembershipEvent event) {}

            @Override
            public void memberRemoved(MembershipEvent event) {
                onLeft.accept(nodeId(event.getMember()));
            }
        });
        return watch;
    }

    /**
     * The member's stable id ({@link ClusterNode#nodeId()}, a member attribute); the member UUID is not
     * stable: Hazelcast renews it when split clusters merge or a member rejoins.
     */
    static String nodeId(Member member) {
        String id = member.getAttribute(ClusterNames.NODE_ID_ATTRIBUTE);
        return id != null ? id : member.getUuid().toString();
    }

    /** Stops watching; may block briefly. */
    public void close() {
        if (registration != null && hazelcast.getLifecycleService().isRunning()) {
            hazelcast.getCluster().removeMembershipListener(registration);
        }
        registration = null;
    }
}
