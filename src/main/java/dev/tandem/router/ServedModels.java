package dev.tandem.router;

import java.util.List;

/**
 * The models a router serves, as the APIs ask about them: which model a request means ({@link #pick}),
 * which ones can be served right now ({@link #listed}), and which one an external worker joins as
 * ({@link #known}). Safe to call from any thread.
 */
public interface ServedModels {

    /** Why a request's model cannot be served; the APIs turn each into its HTTP status and error code. */
    enum Miss {
        /** Several models are served and the request named none: 400, {@code param: model}. */
        REQUIRED,
        /** No such model: 404 {@code model_not_found}. */
        NOT_FOUND,
        /** A model served before, or being learned, that has no usable workers right now: 503. */
        UNAVAILABLE
    }

    /** The model a request gets, or why it gets none (with a message for the caller). */
    record Pick(ServedModel model, Miss miss, String message) {
        public static Pick of(ServedModel model) {
            return new Pick(model, null, null);
        }

        public static Pick missing(Miss miss, String message) {
            return new Pick(null, miss, message);
        }
    }

    /**
     * The model named {@code requested}; with null, the only model served (several are a
     * {@link Miss#REQUIRED}).
     */
    Pick pick(String requested);

    /** The models a request can be served by now (a prefill and a decode worker of each), by name. */
    List<ServedModel> listed();

    /** The model of that name this router can tokenize for (served now, or loaded by the router), or null. */
    ServedModel known(String name);
}
