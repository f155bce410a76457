package io.kvtier.cli.sizing;

import io.kvtier.common.Columns;
import io.kvtier.common.Units;
import io.kvtier.kvcache.sizing.Attention;
import io.kvtier.kvcache.sizing.KvFootprint;
import io.kvtier.kvcache.sizing.ModelSpec;
import io.kvtier.kvcache.sizing.ModelTable;
import io.kvtier.kvcache.sizing.SizingOptions;
import io.kvtier.kvcache.sizing.SizingReport;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@code kvtier size} for people: the model, its KV bytes per token, chunk and sequence, the GPU memory budget and
 * the sequences that fit, a table of the tiers, and the suggested {@code kvtier server} flags. A pure function of the
 * report.
 */
final class SizeTable {
    private SizeTable() {
    }

    static String format(SizingReport r) {
        ModelSpec m = r.model();
        SizingOptions o = r.options();
        KvFootprint kv = r.kv();
        Attention a = m.attention();
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "kvtier size: %s, KV cache %s, tensor parallel %d, LMCache chunks of %,d "
                + "tokens, context %,d tokens%n", m.name(), r.kvDtype(), o.tp(), o.chunkTokens(), o.context()));
        line(b, "model", m.source());
        line(b, "attention", attention(a));
        line(b, "weights", String.format(Locale.ROOT, "%s parameters, %s: %s", billions(m.parameters()),
                o.weightsDtype() != null ? o.weightsDtype().label() : m.weightsLabel(),
                Units.bytes(r.weightBytes())));
        b.append('\n');
        line(b, "KV per token", bytes(kv.bytesPerToken()) + " whole model, " + bytes(kv.workerBytesPerToken())
                + " per GPU" + (a.slidingLayers() > 0 ? " (every layer: what LMCache stores)" : ""));
        if (a.slidingLayers() > 0) {
            line(b, "", String.format(Locale.ROOT, "%s averaged over %,d tokens when sliding-window layers keep "
                    + "only %,d", bytes(Math.round(kv.averageBytesPerToken(o.context()))), o.context(),
                    a.slidingWindow()));
        }
        line(b, "LMCache chunk", bytes(kv.chunkBytes(o.chunkTokens())) + " per worker; " + (a.isMla()
                ? "MLA: stored once, by rank 0" : kv.storingWorkers() == 1 ? "1 worker" : "each of "
                + kv.storingWorkers() + " workers stores its own"));
        sequence(b, r);
        b.append('\n');
        gpu(b, r);
        b.append('\n');
        tiers(b, r);
        b.append('\n');
        suggestion(b, r);
        return b.toString();
    }

    static String list() {
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"MODEL", "HUGGING FACE", "PARAMETERS", "KV BYTES/TOKEN", "ATTENTION"});
        for (ModelTable.Entry e : ModelTable.entries()) {
            ModelSpec m = e.spec();
            rows.add(new String[] {m.name(), e.hfId(), e.publishedParameters(), String.format(Locale.ROOT, "%,d",
                    KvFootprint.of(m, m.dtype(), 1).bytesPerToken()), attention(m.attention())});
        }
        StringBuilder b = new StringBuilder();
        Columns.append(b, rows, new boolean[] {false, false, false, true, false});
        return b.toString();
    }

    private static String attention(Attention a) {
        if (a.isMla()) {
            return String.format(Locale.ROOT, "%d layers x %d-element latent (MLA, %d query heads)", a.layers(),
                    a.mlaLatentDim(), a.attentionHeads());
        }
        String s = String.format(Locale.ROOT, "%d layers x %d KV heads x %d (%s, %d query heads)", a.layers(),
                a.kvHeads(), a.headDim(), a.kvHeads() == a.attentionHeads() ? "MHA" : "GQA", a.attentionHeads());
        return a.slidingLayers() == 0 ? s : s + String.format(Locale.ROOT, "; %d layers slide over %,d tokens",
                a.slidingLayers(), a.slidingWindow());
    }

    private static void sequence(StringBuilder b, SizingReport r) {
        long linear = r.kv().workerSequenceBytes(r.options().context(), false);
        if (r.model().attention().slidingLayers() == 0) {
            line(b, "per sequence", Units.bytes(linear) + " per GPU at " + String.format(Locale.ROOT, "%,d",
                    r.options().context()) + " tokens");
            return;
        }
        long windowed = r.kv().workerSequenceBytes(r.options().context(), true);
        line(b, "per sequence", Units.bytes(linear) + " per GPU at " + String.format(Locale.ROOT, "%,d",
                r.options().context()) + " tokens with vLLM's hybrid KV cache manager off (LMCacheConnectorV1");
        line(b, "", "turns it off),");
        line(b, "", Units.bytes(windowed) + " with it on (sliding-window layers keep their window only)");
    }

    private static void gpu(StringBuilder b, SizingReport r) {
        SizingOptions o = r.options();
        SizingReport.Gpu g = r.gpu();
        line(b, "GPU memory", String.format(Locale.ROOT, "%s x %d GPU%s; vLLM takes %s%% = %s of each,",
                Units.bytes(o.gpuHbm()), o.gpus(), o.gpus() == 1 ? "" : "s", percent(o.gpuMemoryUtilization()),
                Units.bytes(g.usable())));
        line(b, "", String.format(Locale.ROOT, "per GPU: weights %s, activation reserve %s, KV cache %s",
                Units.bytes(g.weights()), Units.bytes(g.reserve()), Units.bytes(g.kv())));
        if (g.kv() == 0) {
            line(b, "", "no room for KV: raise --tp or --gpu-hbm, or lower --weights-dtype or --activation-reserve");
        }
        String max = String.format(Locale.ROOT, "%,d sequences of %,d tokens in %d instance%s of %d GPU%s",
                r.maxSequences(), o.context(), o.instances(), o.instances() == 1 ? "" : "s", o.tp(),
                o.tp() == 1 ? "" : "s");
        if (r.model().attention().slidingLayers() > 0) {
            max += String.format(Locale.ROOT, " (%,d with the hybrid KV cache manager)", r.maxSequencesWindowed());
        }
        line(b, "max sequences", max);
    }

    private static void tiers(StringBuilder b, SizingReport r) {
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"TIER", "BUDGET", "TOKENS", "CHUNKS", "SEQUENCES"});
        for (SizingReport.Tier t : List.of(r.hbm(), r.dram(), r.ssd())) {
            rows.add(new String[] {t.name(), Units.bytes(t.bytes()), String.format(Locale.ROOT, "%,d", t.tokens()),
                    String.format(Locale.ROOT, "%,d", t.chunks()), String.format(Locale.ROOT, "%,d", t.sequences())});
        }
        Columns.append(b, rows, new boolean[] {false, true, true, true, true});
    }

    private static void suggestion(StringBuilder b, SizingReport r) {
        SizingReport.Suggestion s = r.suggestion();
        String held = String.format(Locale.ROOT, "%,d sequences of %,d tokens (%s)", s.sequences(),
                r.options().context(), Units.bytes(s.bytes()));
        line(b, "kvtier", "kvtier server " + s.flags());
        if (!s.targeted()) {
            line(b, "", "holds " + held + " per node; --target-sequences N sizes it for N");
        } else if (s.shortfall() > 0) {
            line(b, "", "for " + held + ": " + Units.bytes(s.shortfall()) + " more than --dram and --ssd hold");
        } else {
            line(b, "", "holds " + held + " per node");
        }
    }

    private static void line(StringBuilder b, String label, String value) {
        b.append(String.format(Locale.ROOT, "  %-14s %s%n", label, value));
    }

    /** {@code 131,072 B (128 KiB)}. */
    private static String bytes(long n) {
        return String.format(Locale.ROOT, "%,d B (%s)", n, Units.bytes(n));
    }

    private static String billions(long n) {
        return String.format(Locale.ROOT, "%.1fB", n / 1e9);
    }

    private static String percent(double f) {
        double p = f * 100;
        return p == Math.rint(p) ? Long.toString(Math.round(p)) : String.format(Locale.ROOT, "%.1f", p);
    }
}
