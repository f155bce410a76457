package io.kvtier.bench.compare;

import io.kvtier.bench.report.OpResult;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Groups passes into {@link Comparison}s: each (workload, size, op, connections, factor) row of each pass goes to
 * its case and system, and each case becomes one comparison of the two systems' averages. Cases keep the order
 * they were first measured in; a case only one system measured is left out. Stateless.
 */
public final class Comparisons {
    private Comparisons() {
    }

    public static List<Comparison> of(List<Pass> passes) {
        Map<CaseKey, Map<Server, List<OpResult>>> cases = new LinkedHashMap<>();
        for (Pass pass : passes) {
            for (OpResult r : pass.result().results()) {
                CaseKey key = new CaseKey(r.workload(), r.valueSize(), r.op(), pass.connections(), pass.factor());
                cases.computeIfAbsent(key, k -> new EnumMap<>(Server.class))
                        .computeIfAbsent(pass.server(), s -> new ArrayList<>()).add(r);
            }
        }
        List<Comparison> out = new ArrayList<>();
        cases.forEach((key, bySystem) -> {
            if (bySystem.containsKey(Server.KVTIER) && bySystem.containsKey(Server.REDIS)) {
                out.add(new Comparison(key, Measurement.average(bySystem.get(Server.KVTIER)),
                        Measurement.average(bySystem.get(Server.REDIS))));
            }
        });
        return out;
    }
}
