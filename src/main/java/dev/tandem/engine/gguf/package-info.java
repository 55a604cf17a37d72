/**
 * The GGUF file format of llama.cpp, Ollama and LM Studio models: a reader that maps each tensor from
 * the file (no copy of the weights on the heap, files over 2 GiB) and refuses malformed files by name,
 * and a writer for tests and benchmarks that need models of real shapes. Knows no engine.
 */
package dev.tandem.engine.gguf;
