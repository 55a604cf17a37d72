package dev.tandem.protocol;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;

/**
 * What the web console shows, as one router sees it: the registered workers by role ({@link WorkerView}:
 * registry entry, reported load, routers' in-flight count), the live router replicas with their requests in flight, this router's requests in
 * flight, requests ended per second over the last period, and session affinity hits and misses since
 * the router started. Published to {@link Addresses#CONSOLE_CLUSTER}; browsers read it, so the field
 * names are the JSON API's (snake case), like {@code /admin/workers} and {@code /admin/routers}.
 *
 * @param timeMillis        when it was taken (epoch milliseconds)
 * @param requestsPerSecond requests that ended (any outcome) per second since the previous snapshot
 */
public record ClusterSnapshot(
        String routerId,
        long timeMillis,
        int inFlight,
        double requestsPerSecond,
        long affinityHits,
        long affinityMisses,
        List<WorkerView> prefill,
        List<WorkerView> decode,
        List<Router> routers) {

    public ClusterSnapshot {
        prefill = List.copyOf(prefill);
        decode = List.copyOf(decode);
        routers = List.copyOf(routers);
    }

    /** Share of session requests that reached their session's decode worker; null before the first one. */
    public Double affinityHitRate() {
        long total = affinityHits + affinityMisses;
        return total == 0 ? null : (double) affinityHits / total;
    }

    /** One live router replica; {@code self} is the one that took the snapshot. */
    public record Router(String routerId, String nodeId, int requestsInFlight, boolean self) {}

    public static final JsonCodec<ClusterSnapshot> CODEC = new JsonCodec<>() {
        @Override
        public JsonObject encode(ClusterSnapshot s) {
            JsonArray routers = new JsonArray();
            for (Router r : s.routers) {
                routers.add(new JsonObject()
                        .put("router", r.routerId)
                        .put("node", r.nodeId)
                        .put("requests_in_flight", r.requestsInFlight)
                        .put("self", r.self));
            }
            return new JsonObject()
                    .put("router", s.routerId)
                    .put("time", s.timeMillis)
                    .put("in_flight", s.inFlight)
                    .put("requests_per_second", s.requestsPerSecond)
                    .put(
                            "affinity",
                            new JsonObject()
                                    .put("hits", s.affinityHits)
                                    .put("misses", s.affinityMisses)
                                    .put("hit_rate", s.affinityHitRate()))
                    .put(
                            "workers",
                            new JsonObject()
                                    .put(WorkerRole.PREFILL.wireName(), workers(s.prefill))
                                    .put(WorkerRole.DECODE.wireName(), workers(s.decode)))
                    .put("routers", routers);
        }

        private JsonArray workers(List<WorkerView> list) {
            JsonArray out = new JsonArray();
            list.forEach(w -> out.add(WorkerView.CODEC.encode(w)));
            return out;
        }

        @Override
        public ClusterSnapshot decode(JsonObject json) {
            JsonObject affinity = JsonFields.requiredObject(json, "affinity");
            JsonObject workers = JsonFields.requiredObject(json, "workers");
            List<Router> routers = new ArrayList<>();
            for (JsonObject r : objects(json, "routers")) {
                routers.add(new Router(
                        JsonFields.requiredString(r, "router"),
                        JsonFields.requiredString(r, "node"),
                        JsonFields.requiredInt(r, "requests_in_flight"),
                        requiredBoolean(r, "self")));
            }
            return new ClusterSnapshot(
                    JsonFields.requiredString(json, "router"),
                    JsonFields.requiredLong(json, "time"),
                    JsonFields.requiredInt(json, "in_flight"),
                    JsonFields.requiredDouble(json, "requests_per_second"),
                    JsonFields.requiredLong(affinity, "hits"),
                    JsonFields.requiredLong(affinity, "misses"),
                    workers(workers, WorkerRole.PREFILL),
                    workers(workers, WorkerRole.DECODE),
                    routers);
        }

        private List<WorkerView> workers(JsonObject byRole, WorkerRole role) {
            List<WorkerView> out = new ArrayList<>();
            for (JsonObject w : objects(byRole, role.wireName())) {
                out.add(WorkerView.CODEC.decode(w));
            }
            return out;
        }

        private List<JsonObject> objects(JsonObject json, String field) {
            if (!(json.getValue(field) instanceof JsonArray array)) {
                throw new ProtocolException("field '" + field + "' must be an array of objects");
            }
            List<JsonObject> out = new ArrayList<>();
            for (Object e : array) {
                if (!(e instanceof JsonObject o)) {
                    throw new ProtocolException("field '" + field + "' must be an array of objects");
                }
                out.add(o);
            }
            return out;
        }

        private boolean requiredBoolean(JsonObject json, String field) {
            if (json.getValue(field) instanceof Boolean b) {
                return b;
            }
            throw new ProtocolException("field '" + field + "' must be a boolean");
        }
    };
}
