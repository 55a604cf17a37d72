package dev.tandem.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tandem.bench.trace.TraceRequest;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** {@code bench route --tenants}: the SPEC, the tenants' Poisson arrivals, their figures in summary.json. */
class TenantRunsTest {

    @Test
    void parsesTheSpec() {
        assertEquals(
                List.of(new TenantSpec("noisy", 0, 535), new TenantSpec("quiet", 2, 21.5)),
                TenantSpec.parse("noisy:rate=535,quiet:priority=2:rate=21.5"));
    }

    static Stream<Arguments> badSpecs() {
        return Stream.of(
                Arguments.of("a:priority=1", "needs rate"),
                Arguments.of("a:rate=0", "needs rate"),
                Arguments.of("a:rate=fast", "not a number"),
                Arguments.of("a:rate=1,a:rate=2", "named twice"),
                Arguments.of("a b:rate=1", "must be 1 to 64"),
                Arguments.of("a:rate=1:weight=2", "unknown field"),
                Arguments.of("a:rate=1:priority=5000", "priority"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badSpecs")
    void refusesABadSpecSayingWhy(String spec, String why) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> TenantSpec.parse(spec));
        assertTrue(e.getMessage().contains(why), e.getMessage());
    }

    @Test
    void arrivalsArePoissonAtEachRateAndEachTenantTakesTheTraceInOrder() {
        List<TraceRequest> trace = new ArrayList<>();
        for (int i = 0; i < 20_000; i++) {
            trace.add(new TraceRequest(i, 10 + i % 7, 1 + i % 3, new long[] {i}));
        }
        List<TenantSpec> specs = TenantSpec.parse("a:rate=90,b:priority=1:rate=10");
        TenantArrivals arrivals = TenantArrivals.of(trace, specs, 20_000);
        long a = arrivals.tenants().stream().filter(t -> t.name().equals("a")).count();
        assertEquals(0.9, a / 20_000.0, 0.01, "a's share is its rate's share");
        long previous = -1;
        int[] drawn = new int[2];
        for (int i = 0; i < trace.size(); i++) {
            TraceRequest r = arrivals.requests().get(i);
            assertTrue(r.arrivalMs() >= previous, "in time order");
            previous = r.arrivalMs();
            int t = specs.indexOf(arrivals.tenants().get(i));
            TraceRequest source = trace.get(drawn[t]++);
            assertEquals(source.inputLength(), r.inputLength(), "each tenant's k-th request is the trace's k-th");
            assertTrue(r.hashIds()[0] != source.hashIds()[0], "block ids salted per tenant: no shared prefixes");
        }
        assertEquals(100, trace.size() / (previous / 1000.0), 3, "the merged rate is the sum of the rates");
        // Alone, b sends exactly what it sent beside a: the same requests at the same times.
        List<TraceRequest> bWithA = new ArrayList<>();
        for (int i = 0; i < trace.size(); i++) {
            if (arrivals.tenants().get(i).name().equals("b")) {
                bWithA.add(arrivals.requests().get(i));
            }
        }
        TenantArrivals alone = TenantArrivals.of(trace, List.of(specs.get(1)), bWithA.size());
        for (int i = 0; i < bWithA.size(); i++) {
            assertEquals(bWithA.get(i).arrivalMs(), alone.requests().get(i).arrivalMs());
            assertEquals(bWithA.get(i).inputLength(), alone.requests().get(i).inputLength());
        }
    }

    @Test
    void figuresPerTenantCountServedRefusedAndLost() {
        List<TenantSpec> specs = TenantSpec.parse("x:rate=1,y:rate=1");
        List<RequestResult> results = List.of(
                new RequestResult(0, 0, 100, 0, 5, 2.0, new double[0], 9, "p", "d", null),
                new RequestResult(1, 0, 100, 0, 5, 4.0, new double[0], 9, "p", "d", null),
                RequestResult.failed(2, 0, 100, 1, "HTTP 429 retry-after=1: {\"error\":{}}"),
                RequestResult.failed(3, 0, 100, 1, "HTTP 429: no Retry-After"),
                RequestResult.failed(4, 0, 100, 1, "HTTP 503 retry-after=1: down"));
        List<TenantSpec> owners = List.of(specs.get(0), specs.get(0), specs.get(0), specs.get(1), specs.get(1));
        Map<String, TenantResult> figures = TenantResult.of(results, owners, specs, 10);
        TenantResult x = figures.get("x");
        assertEquals(List.of(2, 1, 0, 210L), List.of(x.admitted(), x.rejected(), x.lost(), x.tokens()));
        assertTrue(x.ttftP50Ms() >= 20 && x.ttftP99Ms() <= 40 && x.ttftP99Ms() > 30, "in trace time: " + x);
        assertEquals(10, x.rejectedMaxMs(), 1e-9, "its 429 came 1 ms (wall) after it was sent, at time scale 10");
        assertEquals(0, figures.get("y").admitted());
        assertEquals(2, figures.get("y").lost(), "a 429 without Retry-After and a 503 are lost, not refused");

        PolicyResult p = PolicyResult.of("default", results, 1, 10, 0, 0).withTenants(figures);
        JsonObject tenants = BenchReport.summary("t", 5, 0, List.of(p))
                .getJsonObject("policies")
                .getJsonObject("default")
                .getJsonObject("tenants");
        assertEquals(
                new JsonObject()
                        .put("ttft_p50_ms", figures.get("x").ttftP50Ms())
                        .put("ttft_p99_ms", figures.get("x").ttftP99Ms())
                        .put("admitted", 2)
                        .put("rejected", 1)
                        .put("tokens", 210L),
                tenants.getJsonObject("x"));
        assertEquals(List.of("x", "y"), List.copyOf(tenants.fieldNames()));
    }
}
