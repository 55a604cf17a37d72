package dev.tandem.bridge.client;

import dev.tandem.protocol.Addresses;
import io.vertx.ext.bridge.BridgeOptions;
import io.vertx.ext.bridge.PermittedOptions;
import java.util.List;
import java.util.regex.Pattern;

/**
 * What a bridge client may reach, as whitelists: it sends only to {@link Addresses#GENERATE} and
 * {@link Addresses#CANCEL}, and receives only on addresses under {@link Addresses#CLIENT_PREFIX}.
 * Worker and router-internal addresses are never reachable, whatever a client asks for. Kept as
 * Vert.x {@link BridgeOptions} so every client bridge applies the same lists.
 */
public final class ClientPermissions {
    private static final BridgeOptions OPTIONS = new BridgeOptions()
            .addInboundPermitted(new PermittedOptions().setAddress(Addresses.GENERATE))
            .addInboundPermitted(new PermittedOptions().setAddress(Addresses.CANCEL))
            .addOutboundPermitted(new PermittedOptions().setAddressRegex(Addresses.CLIENT_REGEX));

    private ClientPermissions() {}

    /** A fresh copy of the whitelists, for a bridge that takes Vert.x options. */
    public static BridgeOptions options() {
        return new BridgeOptions(OPTIONS);
    }

    /** May a client send or publish to this address? */
    static boolean inbound(String address) {
        return permitted(OPTIONS.getInboundPermitteds(), address);
    }

    /** May a client register (receive on) this address? */
    static boolean outbound(String address) {
        return permitted(OPTIONS.getOutboundPermitteds(), address);
    }

    private static boolean permitted(List<PermittedOptions> list, String address) {
        for (PermittedOptions p : list) {
            if (p.getAddress() != null
                    ? p.getAddress().equals(address)
                    : p.getAddressRegex() != null && Pattern.matches(p.getAddressRegex(), address)) {
                return true;
            }
        }
        return false;
    }
}
