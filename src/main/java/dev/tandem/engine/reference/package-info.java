/**
 * A plain-Java llama-architecture engine that computes what llama2.c's run.c computes: the legacy
 * llama2.c checkpoint format ({@link dev.tandem.engine.reference.Llama2cCheckpoint},
 * {@link dev.tandem.engine.reference.Llama2cCheckpointWriter}), its tokenizer
 * ({@link dev.tandem.engine.tokenizer.Llama2cTokenizer}), a byte tokenizer, a deterministic built-in
 * model, and {@link dev.tandem.engine.reference.ReferenceEngine}, whose batched decode gives every
 * sequence the same bits it would get alone.
 */
package dev.tandem.engine.reference;
