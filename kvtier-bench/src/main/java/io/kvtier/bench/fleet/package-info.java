/**
 * {@code kvtier bench fleet}: drives a fleet of vLLM engines (emulated or real, directly or through the router) over
 * the OpenAI API ({@link io.kvtier.bench.fleet.FleetClient}) with multi-round chats
 * ({@link io.kvtier.bench.fleet.MultiRoundQa}) or a Mooncake trace ({@link io.kvtier.bench.fleet.MooncakeTrace}), and
 * reports per point what the clients measured ({@link io.kvtier.bench.fleet.LatencyStats}) with what the engines and
 * the store did ({@link io.kvtier.bench.fleet.EngineCounters}) as a table, JSON, CSV and charts.
 */
package io.kvtier.bench.fleet;
