package dev.tandem.bridge.worker;

import dev.tandem.engine.tokenizer.Tokenizer;
import dev.tandem.protocol.WorkerWelcome;
import dev.tandem.router.ServedModel;
import java.util.ArrayList;
import java.util.List;

/** What an external worker must agree with to serve a model: the router tokenizes, so ids and limits are its. */
final class ModelSpecs {
    private ModelSpecs() {}

    static WorkerWelcome.ModelSpec of(ServedModel model) {
        Tokenizer tokenizer = model.tokenizer();
        List<Integer> ends = new ArrayList<>();
        for (int t = 0; t < tokenizer.vocabSize(); t++) {
            if (tokenizer.isEndOfSequence(t)) {
                ends.add(t);
            }
        }
        return new WorkerWelcome.ModelSpec(
                model.name(), model.vocabSize(), model.contextLength(), tokenizer.bos(), tokenizer.eos(), ends);
    }
}
