package dev.tandem.router;

import java.util.List;

/** Test doubles of {@link ServedModels}. */
public final class TestModels {
    private TestModels() {}

    /** One model, always there: for a router fixed to one model . */
    public static ServedModels single(ServedModel model) {
        return new ServedModels() {
            @Override
            public ServedModels.Pick pick(String requested) {
                return requested == null || requested.equals(model.name())
                        ? ServedModels.Pick.of(model)
                        : ServedModels.Pick.missing(
                                ServedModels.Miss.NOT_FOUND,
                                "The model '" + requested + "' does not exist; this server serves '" + model.name()
                                        + "'");
            }

            @Override
            public List<ServedModel> listed() {
                return List.of(model);
            }

            @Override
            public ServedModel known(String name) {
                return model.name().equals(name) ? model : null;
            }
        };
    }
}
