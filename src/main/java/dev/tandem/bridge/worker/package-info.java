/**
 * The worker bridge: prefill and decode workers in other processes (another language, a GPU engine)
 * join the cluster over TCP and speak the Java workers' protocol. {@code WorkerBridgeConnection} is one
 * joined worker's connection; {@code ExternalWorker} its registry presence and addresses.
 */
package dev.tandem.bridge.worker;
