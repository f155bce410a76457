package io.kvtier.store.disk;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * The disk tier over several directories, one per drive (issue 30).
 *
 * Each directory is a DiskTier of its own: its region log, its budget (an equal share of --disk), its seals and
 * recovery rules, its lock, and a flush thread of its own, so that a demotion batch spread over N drives is written
 * to all of them at once. What the store sees is one tier: a record's location names its region, and the region its
 * directory.
 *
 * Where a record goes. A value goes to its key's home: the live directory with the highest hash of (key, directory
 * id), rendezvous hashing, so that losing or adding a directory moves only the keys homed there. A tombstone or an
 * expiry change goes to the directory of the version it ends or changes (the caller says which: the entry's disk
 * location), and to the key's home when that version is not on disk. So every directory's own log is as exact as
 * the single-directory one: a key's newest record there is either its current value or a tombstone written after
 * the rest, and eviction, oldest region first, removes a directory's older records of a key before the tombstone
 * that ends them. Recovery merges all directories' records by sequence number (IndexBuilder), as it merges one
 * directory's regions. A large value streamed to a file of its own goes to the directory with the most room, and a
 * value whose home's share is full (a shutdown flush keeps every new region) to the next directory in its key's
 * order: placement is free, since the tombstones of a key's older versions went where those versions are. Damage
 * that names no key (RegionScanner) therefore concerns only the keys whose newest record is in the same directory.
 *
 * Losing a directory. Once a second the writer asks each directory whether it is still the one locked
 * (DiskTier#checkDirectory: deleted, replaced, unmounted). A lost one's regions are handed to the eviction callback,
 * so its keys that lived only there are misses at once, values also in memory stay and are demoted elsewhere later;
 * its files are not touched (the path may now be another node's); its keys' home moves to the others. The node
 * goes on; only when every directory is lost does the tier fail as a single directory does.
 *
 * Membership. A file, disk-set, in each directory names the set (a random id), the directory (another), the set's
 * generation and its members; it is written once every directory opened, whenever the set changed, and by the
 * survivors when a directory is lost (before its regions are dropped). At start-up the newest generation found
 * decides: a directory it does not name was lost or left out since (its keys went elsewhere, and were written,
 * deleted or expired there), so its regions are stale and deleted before anything is read (an ERROR says how many);
 * a new, empty directory joins, unless a member is missing, for then it is most often that member's drive not
 * mounted (an operator marks a replaced drive with an empty file disk-set.replace); a directory that holds regions
 * but no disk-set file while others have one, or another set's file, is refused. One directory and no file is the
 * layout of before: nothing is written.
 */
/** The disk tier over one or more directories, one DiskTier each: see the essay above. */
public final class DiskSet implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(DiskSet.class);
    static final String MEMBERSHIP = "disk-set";
    /** An operator's mark on an empty directory that replaces a lost member's drive (see {@link #open}). */
    static final String REPLACE = "disk-set.replace";

    private final DiskTier[] tiers;
    private final long[] ids;
    private final long set;
    private final boolean[] live;          // writer thread writes; readers of placement are on it too
    private volatile int liveCount;
    private final ExecutorService[] flushers;
    private final boolean[] dirty;         // appended to since the last flush; writer thread only
    private long generation;
    private final boolean membership;      // whether disk-set files are kept (several directories, or one was)
    private int lastFailed = -1;           // the tier whose append or flush failed last; writer thread only
    private final java.util.concurrent.atomic.AtomicInteger nextDirect = new java.util.concurrent.atomic.AtomicInteger();

    private DiskSet(DiskTier[] tiers, long[] ids, long set, long generation, boolean membership) {
        this.tiers = tiers;
        this.ids = ids;
        this.set = set;
        this.generation = generation;
        this.membership = membership;
        this.live = new boolean[tiers.length];
        java.util.Arrays.fill(live, true);
        this.liveCount = tiers.length;
        this.dirty = new boolean[tiers.length];
        this.flushers = new ExecutorService[tiers.length];
        if (tiers.length > 1) {
            for (int i = 0; i < tiers.length; i++) {
                String name = "kvtier-disk-flush-" + i;
                flushers[i] = Executors.newSingleThreadExecutor(r -> {
                    Thread t = new Thread(r, name);
                    t.setDaemon(true);
                    return t;
                });
            }
        }
    }

    /**
     * Opens the tier in each of {@code dirs} (at least one, no two the same), {@code budgets[i]} bytes in
     * {@code dirs[i]}, scanning every region and handing each record to {@code recovered}; {@code stats} gets the
     * totals over all directories.
     */
    public static DiskSet open(List<Path> dirs, long[] budgets, Consumer<Region> onEvict,
                               Consumer<RecoveredRecord> recovered, Consumer<RecoveryStats> stats) throws IOException {
        if (dirs.isEmpty() || dirs.size() != budgets.length) {
            throw new IllegalArgumentException("one budget for each of at least one directory");
        }
        Set<Path> distinct = new HashSet<>();
        for (Path d : dirs) {
            if (!distinct.add(d.toAbsolutePath().normalize())) {
                throw new IllegalArgumentException("disk directory " + d + " is given twice");
            }
        }
        // Every directory locked first: nothing is read, let alone deleted, in one another process holds.
        DataDirLock[] locks = new DataDirLock[dirs.size()];
        try {
            for (int i = 0; i < dirs.size(); i++) {
                Files.createDirectories(dirs.get(i));
                locks[i] = DataDirLock.acquire(dirs.get(i));
            }
            return open(dirs, budgets, onEvict, recovered, stats, locks);
        } catch (IOException | RuntimeException e) {
            for (DataDirLock l : locks) {
                if (l != null) {
                    try {
                        l.close();
                    } catch (IOException ignored) {
                        // already failing
                    }
                }
            }
            throw e;
        }
    }

    private static DiskSet open(List<Path> dirs, long[] budgets, Consumer<Region> onEvict,
                                Consumer<RecoveredRecord> recovered, Consumer<RecoveryStats> stats,
                                DataDirLock[] locks) throws IOException {
        Membership[] found = new Membership[dirs.size()];
        long newest = -1;
        Long setId = null;
        for (int i = 0; i < dirs.size(); i++) {
            found[i] = Membership.read(dirs.get(i));
            if (found[i] == null) {
                continue;
            }
            if (setId != null && found[i].set != setId) {
                throw new IOException("disk directory " + dirs.get(i).toAbsolutePath() + " belongs to another "
                        + "store's disk tier (its " + MEMBERSHIP + " file names set " + Long.toHexString(found[i].set)
                        + ", " + dirs.get(0).toAbsolutePath() + "'s names " + Long.toHexString(setId) + ")");
            }
            setId = found[i].set;
            newest = Math.max(newest, found[i].generation);
        }
        Set<Long> members = new HashSet<>();
        for (Membership m : found) {
            if (m != null && m.generation == newest) {
                members.addAll(m.members);
            }
        }
        Set<Long> present = new HashSet<>();
        for (Membership m : found) {
            if (m != null && members.contains(m.id)) {
                present.add(m.id);
            }
        }
        boolean memberMissing = !present.containsAll(members);
        long[] ids = new long[dirs.size()];
        boolean changed = false;
        for (int i = 0; i < dirs.size(); i++) {
            Path dir = dirs.get(i);
            Membership m = found[i];
            if (m != null && members.contains(m.id)) {
                ids[i] = m.id;
                changed |= m.generation < newest; // its file was not rewritten last time (a crash between writes)
                continue;
            }
            changed = true;
            int regions = RegionFiles.count(dir);
            if (m != null) {
                wipe(dir, "it left the set of disk directories at generation " + m.generation + " (lost, or left out "
                        + "of --disk-dir) and the set has moved on to generation " + newest + ": its keys were "
                        + "written, deleted or expired elsewhere since");
            } else if (regions > 0 && (newest >= 0 || i > 0)) {
                throw new IOException("disk directory " + dir.toAbsolutePath() + " holds " + regions + " region "
                        + "files but no " + MEMBERSHIP + " file: it is not part of this store's disk tier; move them "
                        + "away or empty the directory");
            } else if (newest >= 0 && memberMissing && !Files.exists(dir.resolve(REPLACE))) {
                // An empty directory where a member is missing: most often that member's drive, not mounted (the
                // path then is a directory of the filesystem below). Joining would drop the member from the set, and
                // its drive would be emptied once mounted again.
                throw new IOException("disk directory " + dir.toAbsolutePath() + " is empty and has no "
                        + MEMBERSHIP + " file, while a member of the disk set (generation " + newest + ") is not among "
                        + "the configured directories: if this is that drive, mount it; if the drive was replaced "
                        + "(its keys are lost), create an empty file " + dir.resolve(REPLACE) + " and start again");
            }
            ids[i] = freshId(ids, i);
        }
        Set<Long> configured = new HashSet<>(idsOf(ids, null));
        changed |= newest >= 0 && !configured.equals(members); // a member left out of the configuration
        boolean keep = dirs.size() > 1 || newest >= 0;
        long generation = Math.max(0, newest) + (changed && newest >= 0 ? 1 : 0);
        long set = setId != null ? setId : freshId(ids, ids.length);
        DiskTier[] tiers = new DiskTier[dirs.size()];
        RecoveryStats[] each = new RecoveryStats[dirs.size()];
        try {
            for (int i = 0; i < dirs.size(); i++) {
                int n = i;
                DataDirLock lock = locks[i];
                locks[i] = null; // the tier owns it now, and closes it on failure
                // Damage that names no key is scoped to its directory: a key's records in another directory never
                // depend on it (a tombstone or expiry record goes where the version it ends is).
                Consumer<RecoveredRecord> tagged = r -> recovered.accept(r.type() == RecoveredRecord.DAMAGED_UNKNOWN
                        ? RecoveredRecord.damagedUnknown(r.seq(), n) : r);
                tiers[i] = DiskTier.open(dirs.get(i), budgets[i], RegionFiles.regionBytesFor(budgets[i]), onEvict, tagged,
                        x -> each[n] = x, lock);
                tiers[i].index = i;
            }
        } catch (IOException | RuntimeException e) {
            for (DiskTier t : tiers) {
                if (t != null) {
                    t.abandon();
                }
            }
            throw e;
        }
        // Only once every directory opened: a start that fails leaves the set as it was.
        if (keep && (changed || found[0] == null)) {
            for (int i = 0; i < dirs.size(); i++) {
                Membership.write(dirs.get(i), new Membership(set, ids[i], generation, idsOf(ids, null)));
            }
            for (Path dir : dirs) {
                Files.deleteIfExists(dir.resolve(REPLACE));
            }
        }
        for (DiskTier t : tiers) {
            if (t.usedBytes() > t.budget()) {
                log.warn("disk directory {} holds {} bytes of regions, more than its share of --disk ({} bytes): its "
                        + "oldest regions will be evicted as soon as it is written to; raise --disk to keep them",
                        t.dir().toAbsolutePath(), t.usedBytes(), t.budget());
            }
        }
        stats.accept(total(each));
        if (dirs.size() > 1) {
            log.info("disk tier over {} directories, {} bytes each: {}", dirs.size(), budgets[0], dirs);
        }
        return new DiskSet(tiers, ids, set, generation, keep);
    }

    private static long freshId(long[] ids, int upTo) {
        java.security.SecureRandom random = new java.security.SecureRandom();
        while (true) {
            long id = random.nextLong();
            boolean taken = false;
            for (int j = 0; j < upTo; j++) {
                taken |= ids[j] == id;
            }
            if (!taken) {
                return id;
            }
        }
    }

    private static List<Long> idsOf(long[] ids, boolean[] live) {
        List<Long> out = new ArrayList<>();
        for (int i = 0; i < ids.length; i++) {
            if (live == null || live[i]) {
                out.add(ids[i]);
            }
        }
        return out;
    }

    private static void wipe(Path dir, String why) throws IOException {
        List<Path> regions = RegionFiles.list(dir);
        long bytes = 0;
        for (Path p : regions) {
            bytes += Files.size(p);
            Files.delete(p);
        }
        try (var list = Files.list(dir)) {
            for (Path p : list.filter(f -> f.getFileName().toString().endsWith(DiskTier.DIRECT_SUFFIX)).toList()) {
                Files.delete(p);
            }
        }
        log.error("disk directory {}: {}; deleted its {} stale region files ({} bytes) before reading anything",
                dir.toAbsolutePath(), why, regions.size(), bytes);
    }

    private static RecoveryStats total(RecoveryStats[] each) {
        int regions = 0;
        int damaged = 0;
        long records = 0;
        long bytes = 0;
        long dropped = 0;
        long droppedBytes = 0;
        long millis = 0;
        long maxSeq = 0;
        for (RecoveryStats s : each) {
            regions += s.regions();
            records += s.records();
            bytes += s.bytes();
            dropped += s.droppedRecords();
            droppedBytes += s.droppedBytes();
            millis += s.millis();
            damaged += s.damagedRegions();
            maxSeq = Math.max(maxSeq, s.maxSeq());
        }
        return new RecoveryStats(regions, records, bytes, dropped, droppedBytes, millis, damaged, maxSeq);
    }

    // ---- placement ------------------------------------------------------------------------------------------------

    /** The live tier with the highest rendezvous hash of {@code key}; -1 if none is live. */
    int home(byte[] key) {
        if (tiers.length == 1) {
            return live[0] ? 0 : -1;
        }
        long fp = RecordFormat.fingerprint(key);
        int best = -1;
        long bestScore = 0;
        for (int i = 0; i < tiers.length; i++) {
            if (!live[i]) {
                continue;
            }
            long score = mix(fp ^ ids[i]);
            if (best < 0 || Long.compareUnsigned(score, bestScore) > 0) {
                best = i;
                bestScore = score;
            }
        }
        return best;
    }

    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    private int indexOf(DiskTier tier) {
        for (int i = 0; i < tiers.length; i++) {
            if (tiers[i] == tier) {
                return i;
            }
        }
        throw new IllegalArgumentException("a region of another disk tier");
    }

    private DiskTier tierOf(Region region) {
        DiskTier owner = region.owner();
        return owner != null ? owner : tiers[0];
    }

    // ---- writes (writer thread) -----------------------------------------------------------------------------------

    /** Appends a value (or any record of a key whose other records are not on disk) to its key's home directory. */
    public DiskLocation append(PendingRecord record) throws IOException {
        return append(record, null);
    }

    /**
     * Appends {@code record}: to the directory of {@code near} (the region holding the version it ends or changes)
     * while that directory is live, else to the key's home. Writer thread only.
     */
    public DiskLocation append(PendingRecord record, Region near) throws IOException {
        int nearIndex = near != null && near.owner() != null ? indexOf(near.owner()) : -1;
        int i = nearIndex >= 0 && live[nearIndex] ? nearIndex : home(record.key());
        if (i < 0) {
            throw new DataDirLostException(tiers[0].dir());
        }
        try {
            DiskLocation loc = tiers[i].append(record);
            dirty[i] = true;
            return loc;
        } catch (DiskFullException full) {
            // This directory's share cannot take it (its newest regions are kept: a shutdown flush): another may. A
            // value may go anywhere (the tombstones of its older versions went where those are), and a record that
            // ends a version here could not fit here anyway.
            for (int j : byPreference(record.key(), i)) {
                try {
                    DiskLocation loc = tiers[j].append(record);
                    dirty[j] = true;
                    return loc;
                } catch (DiskFullException alsoFull) {
                    // the next one
                }
            }
            throw full;
        } catch (IOException e) {
            lastFailed = i;
            if (lostNow(i)) { // gone between two checks: the record goes to the others
                return append(record, null);
            }
            throw e;
        }
    }

    /** The live tiers other than {@code except}, in {@code key}'s rendezvous order. */
    private List<Integer> byPreference(byte[] key, int except) {
        long fp = RecordFormat.fingerprint(key);
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < tiers.length; i++) {
            if (live[i] && i != except) {
                out.add(i);
            }
        }
        out.sort((x, y) -> Long.compareUnsigned(mix(fp ^ ids[y]), mix(fp ^ ids[x])));
        return out;
    }

    /**
     * Whether tier {@code i}, whose write just failed, is lost (its directory deleted, replaced or unmounted since the
     * last check): then it leaves the set at once, rather than at the next check a second later.
     */
    private boolean lostNow(int i) {
        if (tiers.length == 1) {
            return false; // one directory: its failure is the tier's, as before
        }
        if (!live[i]) {
            return true; // left the set already
        }
        if (stillThere(i)) {
            return false;
        }
        lose(List.of(i));
        return liveCount > 0;
    }

    /** Writes what the appends left in the directories' buffers, every directory at once. Writer thread only. */
    public void flush() throws IOException {
        int first = -1;
        List<Future<?>> others = new ArrayList<>();
        List<Integer> which = new ArrayList<>();
        for (int i = 0; i < tiers.length; i++) {
            if (!dirty[i] || !live[i]) {
                continue;
            }
            dirty[i] = false;
            if (first < 0) {
                first = i;
            } else {
                DiskTier t = tiers[i];
                others.add(flushers[i].submit(() -> {
                    t.flush();
                    return null;
                }));
                which.add(i);
            }
        }
        IOException failure = null;
        if (first >= 0) {
            try {
                tiers[first].flush();
            } catch (IOException e) {
                if (!lostNow(first)) { // lost: what it held is evicted, and its entries stay in memory
                    lastFailed = first;
                    failure = e;
                }
            }
        }
        boolean interrupted = false;
        for (int k = 0; k < others.size(); k++) {
            // Every flush is waited for, even when interrupted: the tiers' buffers must not be touched while a flush
            // thread still writes them (a crash's abandon clears them).
            while (true) {
                try {
                    others.get(k).get();
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (java.util.concurrent.ExecutionException e) {
                    int i = which.get(k);
                    if (failure == null && !lostNow(i)) {
                        lastFailed = i;
                        failure = e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
                    }
                    break;
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
            failure = failure == null ? new java.io.InterruptedIOException("flush interrupted") : failure;
        }
        if (failure != null) {
            throw failure;
        }
    }

    /** Forces every live directory's writes to stable storage. Writer thread only. */
    public void force() throws IOException {
        flush();
        for (int i = 0; i < tiers.length; i++) {
            if (live[i]) {
                tiers[i].force();
            }
        }
    }

    /** See {@link DiskTier#keepNewRegions}: in every live directory. */
    public void keepNewRegions() throws IOException {
        for (int i = 0; i < tiers.length; i++) {
            if (live[i]) {
                tiers[i].keepNewRegions();
            }
        }
    }

    /**
     * After "no space left on device": evicts the oldest region of the directory that ran out (or, not knowing which,
     * of the first that can), so that a retry can fit. Writer thread only.
     */
    public boolean evictOldestForSpace() throws IOException {
        if (lastFailed >= 0 && live[lastFailed]) {
            return tiers[lastFailed].evictOldestForSpace();
        }
        for (int i = 0; i < tiers.length; i++) {
            if (live[i] && tiers[i].evictOldestForSpace()) {
                return true;
            }
        }
        return false;
    }

    /** Starts streaming a large value into a file of its own, in the live directory with the most room. */
    public DirectWrite openDirectWrite(long length, java.util.concurrent.Executor io) throws IOException {
        if (liveCount == 0) { // read first: the writer's changes to live[] happen before its write of liveCount
            throw new DataDirLostException(tiers[0].dir());
        }
        int best = -1;
        long room = 0;
        int start = Math.floorMod(nextDirect.getAndIncrement(), tiers.length);
        for (int k = 0; k < tiers.length; k++) {
            int i = (start + k) % tiers.length;
            long free = tiers[i].budget() - tiers[i].usedBytes();
            if (live[i] && (best < 0 || free > room)) {
                best = i;
                room = free;
            }
        }
        if (best < 0) {
            throw new DataDirLostException(tiers[0].dir());
        }
        return tiers[best].openDirectWrite(length, io);
    }

    /** Turns a finished direct write into a region of the directory it was written in. Writer thread only. */
    public DiskLocation adopt(DirectWrite write, byte[] key, long seq, long expireAt, long version)
            throws IOException {
        Path dir = write.file().getParent();
        for (int i = 0; i < tiers.length; i++) {
            if (tiers[i].dir().equals(dir)) {
                if (!live[i]) {
                    throw new DataDirLostException(dir);
                }
                return tiers[i].adopt(write, key, seq, expireAt, version);
            }
        }
        throw new IllegalArgumentException("direct write " + write.file() + " is in none of the disk directories");
    }

    /** See {@link DiskTier#discard}. Writer thread only. */
    public void discard(Region region) throws IOException {
        tierOf(region).discard(region);
    }

    /** Deletes every region of every live directory (FLUSHALL). Writer thread only. */
    public void deleteAll() throws IOException {
        for (int i = 0; i < tiers.length; i++) {
            if (live[i]) {
                tiers[i].deleteAll();
            }
        }
    }

    /**
     * Checks that every live directory is still the one locked (DiskTier#checkDirectory). A lost one is dropped from
     * the set (its regions evicted as far as the store is concerned, its files untouched, the others told in their
     * disk-set files); only when none is left does this throw. Writer thread only.
     *
     * @throws DataDirLostException once every directory is lost
     */
    public void checkDirectory() throws DataDirLostException {
        List<Integer> lost = new ArrayList<>();
        for (int i = 0; i < tiers.length; i++) {
            if (live[i] && !stillThere(i)) {
                lost.add(i);
            }
        }
        if (!lost.isEmpty()) {
            if (tiers.length == 1) {
                throw new DataDirLostException(tiers[0].dir());
            }
            lose(lost);
        }
        if (liveCount == 0) {
            throw new DataDirLostException(tiers[0].dir());
        }
    }

    private boolean stillThere(int i) {
        try {
            tiers[i].checkDirectory();
            return true;
        } catch (DataDirLostException e) {
            return false;
        }
    }

    /**
     * Drops the tiers {@code lost} from the set: first the survivors' disk-set files say so (each survivor checked
     * again right before its file is written: a directory lost too is dropped with them), then the lost tiers' regions
     * are handed to eviction. A crash in between leaves them out of the set and their regions unread: emptied at the
     * next start.
     */
    private void lose(List<Integer> lost) {
        List<Integer> gone = new ArrayList<>(lost);
        for (int i : gone) {
            live[i] = false;
        }
        if (membership) {
            boolean again = true;
            while (again) {
                again = false;
                for (int j = 0; j < tiers.length; j++) {
                    if (live[j] && !stillThere(j)) {
                        live[j] = false;
                        gone.add(j);
                        again = true;
                    }
                }
            }
            generation++;
            List<Long> members = idsOf(ids, live);
            for (int j = 0; j < tiers.length; j++) {
                if (!live[j]) {
                    continue;
                }
                try {
                    Membership.write(tiers[j].dir(), new Membership(set, ids[j], generation, members));
                } catch (IOException e) {
                    log.error("could not record in {} that {} left the disk set: if it comes back before this is "
                            + "recorded, its stale keys may be served again: {}", tiers[j].dir(),
                            gone.stream().map(i -> tiers[i].dir().toString()).toList(), e.toString());
                }
            }
        }
        for (int i : gone) {
            liveCount--;
            tiers[i].forgetAll();
            log.error("disk directory {} is lost: its keys that were only there are misses from now on, values also "
                    + "in memory stay and go to the other directories; {} of {} directories left",
                    tiers[i].dir().toAbsolutePath(), liveCount, tiers.length);
        }
    }

    /** Whether the first directory (where the store keeps its own files) is still the one this node locked. */
    public void checkFirstDirectory() throws DataDirLostException {
        if (!live[0]) {
            throw new DataDirLostException(tiers[0].dir());
        }
        tiers[0].checkDirectory();
    }

    // ---- reads (any thread) ---------------------------------------------------------------------------------------

    /** See {@link DiskTier#read}. */
    public ByteBuffer read(DiskLocation location, byte[] expectedKey, ByteBuffer dst) throws IOException {
        return tierOf(location.region()).read(location, expectedKey, dst);
    }

    /** See {@link DiskTier#verify}. */
    public void verify(DiskLocation location, byte[] expectedKey, ByteBuffer scratch) throws IOException {
        tierOf(location.region()).verify(location, expectedKey, scratch);
    }

    /** See {@link DiskTier#readValue}. */
    public void readValue(DiskLocation location, long valueOffset, ByteBuffer dst) throws IOException {
        tierOf(location.region()).readValue(location, valueOffset, dst);
    }

    // ---- figures ----------------------------------------------------------------------------------------------------

    /** The largest record every live directory can take. */
    public long maxRecordLength() {
        long most = Long.MAX_VALUE;
        for (int i = 0; i < tiers.length; i++) {
            if (live[i]) {
                most = Math.min(most, tiers[i].maxRecordLength());
            }
        }
        return most == Long.MAX_VALUE ? tiers[0].maxRecordLength() : most; // none live: as one lost directory
    }

    /** Bytes the live directories may hold. */
    public long budget() {
        return sum(DiskTier::budget, true);
    }

    /** Bytes of regions in the live directories. */
    public long usedBytes() {
        return sum(DiskTier::usedBytes, true);
    }

    /** Regions evicted so far, in every directory. */
    public long evictedRegions() {
        return sum(DiskTier::evictedRegions, false);
    }

    /** Records read with O_DIRECT so far, in every directory. */
    public long directReadCount() {
        return sum(DiskTier::directReadCount, false);
    }

    private long sum(java.util.function.ToLongFunction<DiskTier> figure, boolean liveOnly) {
        long sum = 0;
        for (int i = 0; i < tiers.length; i++) {
            sum += liveOnly && !live[i] ? 0 : figure.applyAsLong(tiers[i]);
        }
        return sum;
    }

    /** Directories in the set, and how many of them are live. */
    public int directories() {
        return tiers.length;
    }

    public int liveDirectories() {
        return liveCount;
    }

    // ---- closing ----------------------------------------------------------------------------------------------------

    /** Closes every live directory (see {@link DiskTier#close}); the first failure is thrown after all are closed. */
    @Override
    public void close() throws IOException {
        IOException failure = null;
        for (int i = 0; i < tiers.length; i++) {
            if (!live[i]) {
                continue;
            }
            try {
                tiers[i].close();
            } catch (IOException e) {
                failure = failure == null ? e : failure;
            }
        }
        shutdownFlushers();
        if (failure != null) {
            throw failure;
        }
    }

    /** See {@link DiskTier#abandon}: every directory. */
    public void abandon() {
        for (int i = 0; i < tiers.length; i++) {
            if (live[i]) {
                tiers[i].abandon();
            }
        }
        shutdownFlushers();
    }

    private void shutdownFlushers() {
        for (ExecutorService f : flushers) {
            if (f != null) {
                f.shutdownNow();
            }
        }
    }

    /** One directory's disk-set file: the set's id, the directory's id, the set's generation and its members' ids. */
    record Membership(long set, long id, long generation, List<Long> members) {
        static Membership read(Path dir) throws IOException {
            Path file = dir.resolve(MEMBERSHIP);
            if (!Files.exists(file)) {
                return null;
            }
            Properties p = new Properties();
            try (var in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
                p.load(in);
            }
            try {
                long set = Long.parseUnsignedLong(p.getProperty("set"), 16);
                long id = Long.parseUnsignedLong(p.getProperty("id"), 16);
                long generation = Long.parseLong(p.getProperty("generation"));
                Set<Long> members = new LinkedHashSet<>();
                for (String m : p.getProperty("members").split(",")) {
                    if (!m.isBlank()) {
                        members.add(Long.parseUnsignedLong(m.trim(), 16));
                    }
                }
                return new Membership(set, id, generation, List.copyOf(members));
            } catch (RuntimeException e) {
                throw new IOException(file.toAbsolutePath() + " is not a disk-set file this version can read ("
                        + e + "); it names this directory and the others of the disk tier", e);
            }
        }

        /** Writes it atomically (a temporary file, forced, renamed over the old one) and forces the directory. */
        static void write(Path dir, Membership m) throws IOException {
            StringBuilder members = new StringBuilder();
            for (long id : m.members) {
                members.append(members.isEmpty() ? "" : ",").append(Long.toHexString(id));
            }
            String text = "# kvtier disk tier: this directory and the others of its set (do not edit)\n"
                    + "set=" + Long.toHexString(m.set) + "\nid=" + Long.toHexString(m.id) + "\ngeneration=" + m.generation + "\nmembers=" + members + "\n";
            Path tmp = dir.resolve(MEMBERSHIP + ".tmp");
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                ch.write(ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)));
                ch.force(true);
            }
            Files.move(tmp, dir.resolve(MEMBERSHIP), StandardCopyOption.ATOMIC_MOVE,
                    StandardCopyOption.REPLACE_EXISTING);
            try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
                d.force(true);
            } catch (IOException e) {
                log.debug("could not force directory {}: {}", dir, e.toString());
            }
        }
    }
}
