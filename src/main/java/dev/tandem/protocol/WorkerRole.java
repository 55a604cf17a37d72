package dev.tandem.protocol;

/** The pool a worker serves in. */
public enum WorkerRole {
    PREFILL,
    DECODE;

    public String wireName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }

    public static WorkerRole fromWire(String name) {
        for (WorkerRole r : values()) {
            if (r.wireName().equals(name)) {
                return r;
            }
        }
        throw new ProtocolException("unknown worker role '" + name + "'");
    }
}
