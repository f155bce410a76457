package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.cli.cluster.ClusterCommand;
import io.kvtier.common.Sizes;
import io.kvtier.server.config.ServerOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * deploy/k8s against the real flag code: the ConfigMap's kvtier.conf and the StatefulSet's args parse into valid
 * cluster options, every flag in the args exists, and the ports, data directory and memory limit agree with the
 * settings. Reads the YAML as text (the project has no YAML library): it relies on the block-list layout of args.
 */
class KubernetesManifestTest {
    private static final Path K8S = Path.of("..", "deploy", "k8s");
    private static final Path CONF = K8S.resolve("kvtier.conf");

    @Test
    void theConfigFileParsesWithTheServersOwnFlagCode() throws Exception {
        Map<String, String> settings = ConfigFile.read(CONF, ServerCommand.SETTINGS);
        assertThat(settings).containsEntry("bind", "0.0.0.0").doesNotContainKey("protected-mode")
                .doesNotContainKey("requirepass").containsKeys("memory", "disk", "dir", "metrics-port", "cluster-port", "replicas");
        ServerOptions o = podOptions();
        assertThat(o.bind()).isEqualTo("0.0.0.0");
        assertThat(o.protectedMode()).isTrue();
        assertThat(o.requirePass()).as("from the Secret, through the args").isEqualTo("s3cret");
        assertThat(o.cluster()).isNotNull();
        assertThat(o.cluster().membership().nodeId()).isEqualTo("kvtier-0");
        assertThat(o.cluster().membership().endpoint()).isEqualTo("10.1.2.3:6379");
        assertThat(o.cluster().membership().dnsQuery()).isEqualTo("kvtier-headless.cache.svc.cluster.local");
        assertThat(o.cluster().membership().bindHost()).isEqualTo("10.1.2.3");
    }

    @Test
    void everyFlagInTheStatefulSetArgsIsAServerOption() throws Exception {
        List<String> args = statefulSetArgs();
        assertThat(args.getFirst()).isEqualTo("server");
        CommandLine.Model.CommandSpec server = new CommandLine(new ServerCommand()).getCommandSpec();
        List<String> flags = args.stream().filter(a -> a.startsWith("--")).toList();
        assertThat(flags).contains("--config", "--node-id", "--announce", "--dns-query", "--requirepass");
        for (String flag : flags) {
            assertThat(server.findOption(flag)).as("kvtier server has no option " + flag).isNotNull();
        }
    }

    @Test
    void portsDataDirectoryAndMemoryLimitAgreeWithTheSettings() throws Exception {
        String sts = Files.readString(K8S.resolve("statefulset.yaml"));
        ServerOptions o = podOptions();
        for (int port : List.of(o.port(), o.cluster().membership().clusterPort(), o.metricsPort())) {
            assertThat(sts).contains("containerPort: " + port);
        }
        assertThat(sts).contains("mountPath: " + o.dir());
        assertThat(Files.readString(K8S.resolve("services.yaml"))).contains("clusterIP: None")
                .contains("publishNotReadyAddresses: true");
        assertThat(sts).as("the launcher sizes the heap from index-memory").doesNotContain("KVTIER_HEAP");
        long heap = o.heapBytes();
        long limit = Sizes.parse(group(sts, "limits:\\s+(?:#.*\\s+)*memory: (\\d+)Gi") + "g");
        // README "Memory bound": --memory + heap cap + 256 MiB disk-read staging + 256 MiB JVM and Netty.
        assertThat(limit).isGreaterThanOrEqualTo(o.memoryBytes() + heap + (512L << 20));
        long volume = Sizes.parse(group(sts, "storage: (\\d+)Gi") + "g");
        assertThat(volume).isGreaterThan(o.diskBytes());
    }

    @Test
    void theClusterCommandGroupIsRegistered() {
        CommandLine cli = new CommandLine(new Main());
        assertThat(cli.getSubcommands()).containsKey("cluster");
        assertThat(cli.getSubcommands().get("cluster").getSubcommands()).containsKey("status");
        Object group = cli.getSubcommands().get("cluster").getCommand();
        assertThat(group).isInstanceOf(ClusterCommand.class);
    }

    /** The options of pod kvtier-0 in namespace cache: the args with the downward-API variables filled in. */
    private static ServerOptions podOptions() throws Exception {
        List<String> args = new ArrayList<>();
        for (String a : statefulSetArgs().subList(1, statefulSetArgs().size())) {
            args.add(a.replace("$(POD_NAME)", "kvtier-0").replace("$(POD_IP)", "10.1.2.3")
                    .replace("$(POD_NAMESPACE)", "cache").replace("$(KVTIER_PASSWORD)", "s3cret").replace("/etc/kvtier/kvtier.conf", CONF.toString()));
        }
        assertThat(String.join(" ", args)).doesNotContain("$(");
        ServerCommand cmd = new ServerCommand();
        new CommandLine(cmd).parseArgs(args.toArray(String[]::new));
        return cmd.options();
    }

    /** The container's {@code args:} block list, items unquoted. */
    private static List<String> statefulSetArgs() throws Exception {
        List<String> lines = Files.readAllLines(K8S.resolve("statefulset.yaml"));
        int at = 0;
        while (!lines.get(at).strip().equals("args:")) {
            at++;
        }
        List<String> args = new ArrayList<>();
        for (String line : lines.subList(at + 1, lines.size())) {
            String item = line.strip();
            if (item.startsWith("#")) {
                continue;
            }
            if (!item.startsWith("- ")) {
                break;
            }
            args.add(item.substring(2).strip().replaceAll("^\"(.*)\"$", "$1"));
        }
        return args;
    }

    private static String group(String text, String regex) {
        Matcher m = Pattern.compile(regex).matcher(text);
        assertThat(m.find()).as("statefulset.yaml has " + regex).isTrue();
        return m.group(1);
    }
}
