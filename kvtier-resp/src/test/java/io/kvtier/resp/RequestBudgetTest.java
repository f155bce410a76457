package io.kvtier.resp;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** {@link RequestBudget}: accounts' reserves, what counts against the limit, and eviction of the largest. */
class RequestBudgetTest {
    private static final long R = RequestBudget.RESERVE;

    @Test
    void smallChargesComeFromTheReserveAndTheLimitCountsIt() {
        RequestBudget budget = new RequestBudget(1 << 20);
        RequestBudget.Account a = budget.open(() -> { });
        assertThat(a.charge(100)).isTrue();
        assertThat(budget.used()).isEqualTo(100);
        assertThat(budget.reserved()).isEqualTo(100 + R);
        // Within the reserve: nothing more is taken from the budget.
        assertThat(a.charge(200)).isTrue();
        assertThat(a.charge(300)).isTrue();
        assertThat(budget.reserved()).isEqualTo(100 + R);
        assertThat(a.held()).isEqualTo(600);
        a.release(600);
        assertThat(budget.used()).isZero();
        assertThat(budget.reserved()).isEqualTo(100 + R);
        a.close();
        assertThat(budget.reserved()).isZero();
        assertThat(budget.used()).isZero();
    }

    @Test
    void aLargeChargeGivesBackAllButTheReserveOnRelease() {
        RequestBudget budget = new RequestBudget(1 << 20);
        RequestBudget.Account a = budget.open(() -> { });
        assertThat(a.charge(100_000)).isTrue();
        assertThat(budget.reserved()).isEqualTo(100_000 + R);
        a.release(100_000);
        assertThat(budget.reserved()).isEqualTo(R);
    }

    @Test
    void overHalfTheLimitChargesAreExactAndReservesGoBack() {
        RequestBudget budget = new RequestBudget(100_000);
        RequestBudget.Account big = budget.open(() -> { });
        RequestBudget.Account small = budget.open(() -> { });
        assertThat(small.charge(10)).isTrue();
        assertThat(budget.reserved()).isEqualTo(10 + R);
        assertThat(big.charge(60_000)).isTrue();
        assertThat(budget.reserved()).as("no reserve past half").isEqualTo(10 + R + 60_000);
        small.release(10);
        assertThat(budget.reserved()).as("the small one's reserve given back").isEqualTo(60_000);
        assertThat(small.charge(39_000)).isTrue();
        assertThat(budget.reserved()).isEqualTo(99_000);
        big.release(60_000);
        assertThat(budget.reserved()).as("over half when released: all of it back").isEqualTo(39_000);
        small.release(39_000);
        assertThat(budget.reserved()).as("under half again: a reserve kept").isEqualTo(R);
        big.close();
        small.close();
        assertThat(budget.reserved()).isZero();
    }

    @Test
    void theLargestOtherAccountIsEvictedAndItsReserveStopsCounting() {
        RequestBudget budget = new RequestBudget(100_000);
        AtomicInteger evictions = new AtomicInteger();
        RequestBudget.Account hog = budget.open(evictions::incrementAndGet);
        RequestBudget.Account honest = budget.open(() -> { throw new AssertionError("not the largest"); });
        assertThat(hog.charge(20_000)).isTrue();
        assertThat(hog.charge(50_000)).isTrue();
        assertThat(honest.charge(40_000)).isTrue();
        assertThat(evictions).hasValue(1);
        assertThat(hog.evicted()).isTrue();
        assertThat(budget.used()).isEqualTo(40_000);
        assertThat(budget.reserved()).as("the hog's 70,000 gone; the honest one's reserve taken").isEqualTo(40_000 + R);
        // The largest is refused rather than evicting a smaller one.
        assertThat(honest.charge(70_000)).isFalse();
        assertThat(budget.reserved()).isEqualTo(40_000 + R);
        hog.close();
        honest.close();
        assertThat(budget.reserved()).isZero();
    }
}
