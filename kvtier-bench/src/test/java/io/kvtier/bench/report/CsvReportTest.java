package io.kvtier.bench.report;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class CsvReportTest {

    @Test
    void oneLinePerOperationUnderTheHeaderWithEmptyCellsForNothingMeasured() {
        String[] lines = CsvReport.toCsv(BenchResultJsonTest.sample()).split("\n(?=setget|$)");
        assertThat(lines[0]).isEqualTo(CsvReport.HEADER);
        assertThat(lines[1]).startsWith("setget,1048576,SET,100,2.25,44.4444,46.6034,104857600,0,0,,1,0,,,,,,,");
        assertThat(lines[2]).startsWith("setget,1048576,GET,100,2.5,40,41.943,104857600,98,2,0.98,0,0,50.0");
    }

    @Test
    void cellsWithCommasQuotesOrLineBreaksAreQuoted() {
        assertThat(CsvReport.cell("plain")).isEqualTo("plain");
        assertThat(CsvReport.cell("a,b")).isEqualTo("\"a,b\"");
        assertThat(CsvReport.cell("say \"hi\"")).isEqualTo("\"say \"\"hi\"\"\"");
        assertThat(CsvReport.cell("two\nlines")).isEqualTo("\"two\nlines\"");
    }
}
