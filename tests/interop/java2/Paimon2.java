// Apache Paimon 2.x (Java) driven from the interop tests: every argument after the warehouse is
// one JSON step (or @FILE holding one), run in order in one JVM; each step prints one JSON line
// on stdout (Paimon's own output goes to stderr). Compiled at test time and run by
// tests/interop/java2.py, which fetches the Paimon jar through Maven (see tests/interop/README.md).
//
//   {"op": "create", "table": "db.t", "fields": [["k", "INT NOT NULL"], ["v", "STRING"]],
//    "primaryKeys": ["k"], "partitionKeys": [], "options": {"bucket": "2"}}
//        -> {"schemaId", "rowType", "primaryKeys", "partitionKeys", "options"}
//   {"op": "write", "table": "db.t", "rows": [{"k": 1, "v": "a", "_kind": "+I"}],
//    "overwrite": false}
//        one batch write (each row's "_kind" +I / -U / +U / -D, default +I) and one commit
//        -> {"rows", "latestSnapshot"}
//   {"op": "write-concurrent", "table": "db.t", "batches": [[rows...], [rows...]]}
//        one writer per batch, all opened on the same snapshot, each prepared before any commits;
//        then one commit per batch in order -> {"rows", "latestSnapshot"}
//   {"op": "write-cols", "table": "db.t", "columns": ["v"], "firstRowId": 0,
//    "rows": [{"v": "x"}]}
//        data evolution: one batch write of some columns (BatchTableWrite.withWriteType, a file
//        with _WRITE_COLS) over the row-id range starting at firstRowId (the rows of that range,
//        in order), committed -> {"rows", "latestSnapshot"}
//   {"op": "read", "table": "db.t", "options": {"scan.snapshot-id": "1"}, "rowTracking": false}
//        every row of a batch read (table.copy(options)) -> {"rows": [{column: value}]}; any
//        table the catalog opens: "db.t$branch_b1", "db.t$audit_log" (with options
//        "incremental-between": "1,2", "incremental-between-scan-mode": "changelog": the
//        changelog between two snapshots, each row's kind in column "rowkind"); with
//        "rowTracking" the table's $row_tracking system table (RowTrackingTable: the
//        columns, then _ROW_ID and _SEQUENCE_NUMBER)
//   {"op": "alter", "table": "db.t", "changes": [{"add": "c", "type": "STRING"},
//    {"rename": ["a", "a2"]}, {"drop": "b"}, {"type": ["n", "BIGINT"]}, {"set": ["key", "v"]}]}
//        one Catalog.alterTable of every change -> {"schemaId", "rowType"}
//   {"op": "create-tag", "table": "db.t", "tag": "t1", "snapshot": 1}  (latest without it)
//   {"op": "delete-tag", "table": "db.t", "tag": "t1"}
//   {"op": "tags", "table": "db.t"}           each -> {"tags": {name: snapshot id}}
//   {"op": "create-branch", "table": "db.t", "branch": "b1", "tag": "t1"}  (empty without it)
//   {"op": "branches", "table": "db.t"}       each -> {"branches": [names]}
//   {"op": "fast-forward", "table": "db.t", "branch": "b1"}
//   {"op": "rollback", "table": "db.t", "snapshot": 2}  (or "tag": "t1")
//        each -> {"latestSnapshot"}
//   {"op": "expire", "table": "db.t", "retainMax": 1, "retainMin": 1}
//        ExpireSnapshots keeping the latest retainMax (no time limit, as CALL sys.expire_snapshots
//        with only retain_max) -> {"expired", "earliestSnapshot"}
//   {"op": "snapshots", "table": "db.t"}
//        -> {"snapshots": [{id, schemaId, commitKind, totalRecordCount, deltaRecordCount,
//        changelogRecordCount, nextRowId}]}
//   {"op": "files", "table": "db.t", "options": {...}}
//        the live data files -> {"files": [{partition, bucket, file, level, rowCount,
//        minSequenceNumber, maxSequenceNumber, schemaId, firstRowId, writeCols, fileSource}]}
//   {"op": "compact", "table": "db.t", "full": true}
//        BatchTableWrite.compact(partition, bucket, full) of every bucket with files, one commit
//        -> {"buckets", "latestSnapshot"}
//   {"op": "compact-append", "table": "db.t"}
//        an unaware-bucket append table compacted as Paimon-Spark's CompactProcedure does:
//        AppendCompactCoordinator's tasks run by one BaseAppendFileStoreWrite (write type
//        with _ROW_ID and _SEQUENCE_NUMBER on row-tracking tables), one commit
//        -> {"tasks", "latestSnapshot"}
//
// Any step with "catch": true prints {"error": exception and causes} when it fails, and the
// steps after it run; without it a failure ends the program (exit code 1, message on stderr).
//
// Input values go through Paimon's TypeUtils.castFromString (their JSON text), VARIANT values
// through GenericVariant.fromJson, BLOB values are their text's UTF-8 bytes (BlobData); output
// values: booleans and numbers as JSON, VARIANT as its toJson() text, BLOB as its bytes' UTF-8 text (ARRAY<VARIANT> as a list, a ROW with VARIANT fields as a map of them),
// everything else as Paimon's cast to STRING.
import java.io.File;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.paimon.Snapshot;
import org.apache.paimon.append.AppendCompactCoordinator;
import org.apache.paimon.append.AppendCompactTask;
import org.apache.paimon.casting.CastExecutor;
import org.apache.paimon.casting.CastExecutors;
import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.BinaryRow;
import org.apache.paimon.data.Blob;
import org.apache.paimon.data.BlobData;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.data.variant.GenericVariant;
import org.apache.paimon.data.variant.Variant;
import org.apache.paimon.disk.IOManager;
import org.apache.paimon.index.HashBucketAssigner;
import org.apache.paimon.io.DataFileMeta;
import org.apache.paimon.manifest.ManifestEntry;
import org.apache.paimon.operation.BaseAppendFileStoreWrite;
import org.apache.paimon.options.ExpireConfig;
import org.apache.paimon.options.Options;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.schema.SchemaChange;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.paimon.table.BucketMode;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.SpecialFields;
import org.apache.paimon.table.Table;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.BatchTableWrite;
import org.apache.paimon.table.sink.BatchWriteBuilder;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.CommitMessageImpl;
import org.apache.paimon.table.sink.RowKeyExtractor;
import org.apache.paimon.table.sink.TableCommitImpl;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.table.system.RowTrackingTable;
import org.apache.paimon.types.DataType;
import org.apache.paimon.types.DataTypeJsonParser;
import org.apache.paimon.types.DataTypeRoot;
import org.apache.paimon.types.DataTypes;
import org.apache.paimon.types.RowKind;
import org.apache.paimon.types.RowType;
import org.apache.paimon.utils.TypeUtils;

public class Paimon2 {
    static final ObjectMapper JSON = new ObjectMapper();

    public static void main(String[] args) throws Exception {
        PrintStream out = System.out;
        System.setOut(System.err); // stdout carries only the JSON lines
        int rc = 0;
        try {
            Options options = new Options();
            String wh = args[0];
            options.set("warehouse", wh.contains(":/") ? wh : new File(wh).getAbsolutePath());
            Catalog catalog = CatalogFactory.createCatalog(CatalogContext.create(options));
            for (int i = 1; i < args.length; i++) {
                String text = args[i].startsWith("@")
                        ? Files.readString(Paths.get(args[i].substring(1))) : args[i];
                JsonNode s = JSON.readTree(text);
                Object result;
                try {
                    result = step(catalog, s);
                } catch (Exception e) {
                    if (!s.path("catch").asBoolean(false)) {
                        throw e;
                    }
                    result = map("error", message(e));
                }
                out.println(JSON.writeValueAsString(result));
            }
        } catch (Throwable e) {
            if (System.getenv("PAIMON2_DEBUG") != null) e.printStackTrace();
            System.err.println("Paimon2: error: " + message(e));
            rc = 1;
        }
        out.flush();
        System.exit(rc); // Paimon may leave non-daemon threads behind
    }

    static Object step(Catalog catalog, JsonNode s) throws Exception {
        String op = s.get("op").asText();
        Identifier id = Identifier.fromString(s.get("table").asText());
        switch (op) {
            case "create":
                return create(catalog, id, s);
            case "alter":
                return alter(catalog, id, s.get("changes"));
            case "read": // any table, system tables ($audit_log, ...) and branches included
                Table any = catalog.getTable(id);
                any = s.has("options") ? any.copy(strings(s.get("options"))) : any;
                if (s.path("rowTracking").asBoolean(false)) {
                    any = new RowTrackingTable((FileStoreTable) any);
                }
                return read(any);
            default:
        }
        // A fresh handle per step: each sees what the steps before it committed.
        FileStoreTable t = (FileStoreTable) catalog.getTable(id);
        if (s.has("options")) {
            t = t.copy(strings(s.get("options")));
        }
        switch (op) {
            case "write":
                List<JsonNode> batch = new ArrayList<>();
                s.get("rows").forEach(batch::add);
                return write(t, List.of(batch), s.path("overwrite").asBoolean(false));
            case "write-concurrent":
                List<List<JsonNode>> batches = new ArrayList<>();
                for (JsonNode b : s.get("batches")) {
                    List<JsonNode> rows = new ArrayList<>();
                    b.forEach(rows::add);
                    batches.add(rows);
                }
                return write(t, batches, false);
            case "create-tag":
                if (s.has("snapshot")) {
                    t.createTag(s.get("tag").asText(), s.get("snapshot").asLong());
                } else {
                    t.createTag(s.get("tag").asText());
                }
                return tags(t);
            case "delete-tag":
                t.deleteTag(s.get("tag").asText());
                return tags(t);
            case "tags":
                return tags(t);
            case "create-branch":
                if (s.has("tag")) {
                    t.createBranch(s.get("branch").asText(), s.get("tag").asText());
                } else {
                    t.createBranch(s.get("branch").asText());
                }
                return map("branches", t.branchManager().branches());
            case "branches":
                return map("branches", t.branchManager().branches());
            case "fast-forward":
                t.fastForward(s.get("branch").asText());
                return map("latestSnapshot", t.snapshotManager().latestSnapshotId());
            case "rollback":
                if (s.has("tag")) {
                    t.rollbackTo(s.get("tag").asText());
                } else {
                    t.rollbackTo(s.get("snapshot").asLong());
                }
                return map("latestSnapshot", t.snapshotManager().latestSnapshotId());
            case "expire":
                int expired = t.newExpireSnapshots().config(ExpireConfig.builder()
                        .snapshotRetainMax(s.get("retainMax").asInt())
                        .snapshotRetainMin(s.path("retainMin").asInt(1)).build()).expire();
                return map("expired", expired, "earliestSnapshot",
                        t.snapshotManager().earliestSnapshotId());
            case "write-cols":
                List<JsonNode> colRows = new ArrayList<>();
                s.get("rows").forEach(colRows::add);
                return writeCols(t, list(s.get("columns")), s.get("firstRowId").asLong(), colRows);
            case "snapshots":
                return snapshots(t);
            case "files":
                return files(t);
            case "compact":
                return compact(t, s.path("full").asBoolean(true));
            case "compact-append":
                return compactAppend(t);
            default:
                throw new IllegalArgumentException("unknown op " + op);
        }
    }

    static Object create(Catalog catalog, Identifier id, JsonNode s) throws Exception {
        Schema.Builder b = Schema.newBuilder();
        for (JsonNode f : s.get("fields")) {
            b.column(f.get(0).asText(), DataTypeJsonParser.parseAtomicTypeSQLString(f.get(1).asText()));
        }
        b.primaryKey(list(s.path("primaryKeys")));
        b.partitionKeys(list(s.path("partitionKeys")));
        b.options(strings(s.path("options")));
        catalog.createDatabase(id.getDatabaseName(), true);
        catalog.createTable(id, b.build(), false);
        FileStoreTable t = (FileStoreTable) catalog.getTable(id);
        return map("schemaId", t.schema().id(), "rowType", t.rowType().toString(),
                "primaryKeys", t.primaryKeys(), "partitionKeys", t.partitionKeys(),
                "options", t.options());
    }

    /**
     * Each change {"add": name, "type": SQL}, {"rename": [from, to]}, {"drop": name},
     * {"type": [name, SQL]} (type widening), {"set": [key, value]}; one schema commit.
     */
    static Object alter(Catalog catalog, Identifier id, JsonNode changes) throws Exception {
        List<SchemaChange> list = new ArrayList<>();
        for (JsonNode c : changes) {
            if (c.has("add")) {
                list.add(SchemaChange.addColumn(c.get("add").asText(), type(c.get("type"))));
            } else if (c.has("rename")) {
                list.add(SchemaChange.renameColumn(
                        c.get("rename").get(0).asText(), c.get("rename").get(1).asText()));
            } else if (c.has("drop")) {
                list.add(SchemaChange.dropColumn(c.get("drop").asText()));
            } else if (c.has("type")) {
                list.add(SchemaChange.updateColumnType(
                        c.get("type").get(0).asText(), type(c.get("type").get(1))));
            } else if (c.has("set")) {
                list.add(SchemaChange.setOption(
                        c.get("set").get(0).asText(), c.get("set").get(1).asText()));
            } else {
                throw new IllegalArgumentException("unknown schema change " + c);
            }
        }
        catalog.alterTable(id, list, false);
        FileStoreTable t = (FileStoreTable) catalog.getTable(id);
        return map("schemaId", t.schema().id(), "rowType", t.rowType().toString());
    }

    static DataType type(JsonNode sql) {
        return DataTypeJsonParser.parseAtomicTypeSQLString(sql.asText());
    }

    static Object tags(FileStoreTable t) {
        Map<String, Object> tags = new LinkedHashMap<>();
        for (String name : t.tagManager().allTagNames()) {
            tags.put(name, t.tagManager().getOrThrow(name).id());
        }
        return map("tags", tags);
    }

    /** The exception and its causes, one line each. */
    static String message(Throwable e) {
        StringBuilder msg = new StringBuilder(e.toString());
        for (Throwable c = e.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
            msg.append("\n  caused by: ").append(c);
        }
        return msg.toString();
    }

    /**
     * One writer per batch, all opened before any commit (so each starts from the same snapshot),
     * each prepared in turn, then committed in batch order.
     */
    static Object write(FileStoreTable t, List<List<JsonNode>> batches, boolean overwrite)
            throws Exception {
        RowType type = t.rowType();
        List<BatchWriteBuilder> builders = new ArrayList<>();
        List<BatchTableWrite> writes = new ArrayList<>();
        List<List<CommitMessage>> prepared = new ArrayList<>();
        int count = 0;
        for (List<JsonNode> rows : batches) {
            BatchWriteBuilder builder = t.newBatchWriteBuilder();
            if (overwrite) {
                builder.withOverwrite();
            }
            builders.add(builder);
            // lookup-based writes (first-row, deletion vectors, lookup changelog) spill to disk
            writes.add(builder.newWrite()
                    .withIOManager(IOManager.create(System.getProperty("java.io.tmpdir"))));
        }
        for (int b = 0; b < batches.size(); b++) {
            BatchTableWrite write = writes.get(b);
            // dynamic bucket mode: buckets as one Flink assigner task picks them
            HashBucketAssigner assigner = t.bucketMode() != BucketMode.HASH_DYNAMIC ? null
                    : new HashBucketAssigner(t.snapshotManager(), "paimon2-" + b,
                            t.store().newIndexFileHandler(), 1, 1, 0,
                            t.coreOptions().dynamicBucketTargetRowNum(),
                            t.coreOptions().dynamicBucketMaxBuckets());
            RowKeyExtractor keys = t.createRowKeyExtractor();
            for (JsonNode r : batches.get(b)) {
                GenericRow row = row(r, type);
                if (assigner == null) {
                    write.write(row);
                } else {
                    keys.setRecord(row);
                    write.write(row, assigner.assign(keys.partition(), keys.trimmedPrimaryKey().hashCode()));
                }
                count++;
            }
            prepared.add(write.prepareCommit());
        }
        for (int b = 0; b < batches.size(); b++) {
            try (BatchTableCommit commit = builders.get(b).newCommit()) {
                commit.commit(prepared.get(b));
            }
            writes.get(b).close();
        }
        return map("rows", count, "latestSnapshot", t.snapshotManager().latestSnapshotId());
    }

    /** Some columns of the rows of one row-id range, as Java's data-evolution tests write them. */
    static Object writeCols(FileStoreTable t, List<String> columns, long firstRowId,
            List<JsonNode> rows) throws Exception {
        RowType type = t.rowType().project(columns);
        BatchWriteBuilder builder = t.newBatchWriteBuilder();
        try (BatchTableWrite write = builder.newWrite().withWriteType(type);
                BatchTableCommit commit = builder.newCommit()) {
            for (JsonNode r : rows) {
                write.write(row(r, type));
            }
            List<CommitMessage> messages = write.prepareCommit();
            for (CommitMessage m : messages) {
                List<DataFileMeta> files = ((CommitMessageImpl) m).newFilesIncrement().newFiles();
                List<DataFileMeta> assigned = new ArrayList<>();
                for (DataFileMeta f : files) {
                    assigned.add(f.assignFirstRowId(firstRowId));
                }
                files.clear();
                files.addAll(assigned);
            }
            commit.commit(messages);
        }
        return map("rows", rows.size(), "latestSnapshot", t.snapshotManager().latestSnapshotId());
    }

    static GenericRow row(JsonNode r, RowType type) {
        Set<String> names = new LinkedHashSet<>();
        r.fieldNames().forEachRemaining(names::add);
        names.remove("_kind");
        for (String name : names) {
            if (!type.containsField(name)) {
                throw new IllegalArgumentException("unknown column: " + name);
            }
        }
        RowKind kind = r.has("_kind") ? RowKind.fromShortString(r.get("_kind").asText())
                : RowKind.INSERT;
        GenericRow row = new GenericRow(kind, type.getFieldCount());
        for (int i = 0; i < type.getFieldCount(); i++) {
            JsonNode v = r.get(type.getFieldNames().get(i));
            DataType ft = type.getTypeAt(i);
            row.setField(i, v == null || v.isNull() ? null
                    : ft.getTypeRoot() == DataTypeRoot.VARIANT ? GenericVariant.fromJson(v.asText())
                    : ft.getTypeRoot() == DataTypeRoot.BLOB
                            ? new BlobData(v.asText().getBytes(StandardCharsets.UTF_8))
                    : TypeUtils.castFromString(v.asText(), ft));
        }
        return row;
    }

    static Object read(Table t) throws Exception {
        RowType type = t.rowType();
        ReadBuilder rb = t.newReadBuilder();
        List<Object> rows = new ArrayList<>();
        try (RecordReader<InternalRow> reader =
                rb.newRead().createReader(rb.newScan().plan().splits())) {
            reader.forEachRemaining(row -> rows.add(named(row, type)));
        }
        return map("rows", rows);
    }

    static Object snapshots(FileStoreTable t) throws Exception {
        List<Object> snaps = new ArrayList<>();
        List<Snapshot> all = t.snapshotManager().safelyGetAllSnapshots();
        all.sort(Comparator.comparingLong(Snapshot::id));
        for (Snapshot s : all) {
            snaps.add(map("id", s.id(), "schemaId", s.schemaId(), "commitKind",
                    s.commitKind().toString(), "totalRecordCount", s.totalRecordCount(),
                    "deltaRecordCount", s.deltaRecordCount(),
                    "changelogRecordCount", s.changelogRecordCount(), "nextRowId", s.nextRowId()));
        }
        return map("snapshots", snaps);
    }

    static Object files(FileStoreTable t) {
        RowType partType = t.schema().logicalPartitionType();
        List<Map<String, Object>> result = new ArrayList<>();
        for (ManifestEntry e : t.store().newScan().plan().files()) {
            DataFileMeta f = e.file();
            result.add(map("partition", named(e.partition(), partType), "bucket", e.bucket(),
                    "file", f.fileName(), "level", f.level(), "rowCount", f.rowCount(),
                    "minSequenceNumber", f.minSequenceNumber(),
                    "maxSequenceNumber", f.maxSequenceNumber(), "schemaId", f.schemaId(),
                    "firstRowId", f.firstRowId(), "writeCols", f.writeCols(),
                    "fileSource", f.fileSource().map(Object::toString).orElse(null)));
        }
        return map("files", result);
    }

    static Object compact(FileStoreTable t, boolean full) throws Exception {
        Map<BinaryRow, Set<Integer>> buckets = new LinkedHashMap<>();
        for (ManifestEntry e : t.store().newScan().plan().files()) {
            buckets.computeIfAbsent(e.partition(), p -> new LinkedHashSet<>()).add(e.bucket());
        }
        BatchWriteBuilder builder = t.newBatchWriteBuilder();
        int count = 0;
        try (BatchTableWrite write = builder.newWrite()
                        .withIOManager(IOManager.create(System.getProperty("java.io.tmpdir")));
                BatchTableCommit commit = builder.newCommit()) {
            for (Map.Entry<BinaryRow, Set<Integer>> e : buckets.entrySet()) {
                for (int bucket : e.getValue()) {
                    write.compact(e.getKey(), bucket, full);
                    count++;
                }
            }
            commit.commit(write.prepareCommit());
        }
        return map("buckets", count, "latestSnapshot", t.snapshotManager().latestSnapshotId());
    }

    static Object compactAppend(FileStoreTable t) throws Exception {
        String user = "paimon2-compact";
        BaseAppendFileStoreWrite write = (BaseAppendFileStoreWrite) t.store().newWrite(user);
        if (t.coreOptions().rowTrackingEnabled()) {
            write.withWriteType(SpecialFields.rowTypeWithRowTracking(t.rowType()));
        }
        List<AppendCompactTask> tasks = new AppendCompactCoordinator(t, false).run();
        List<CommitMessage> messages = new ArrayList<>();
        try {
            for (AppendCompactTask task : tasks) {
                messages.add(task.doCompact(t, write));
            }
        } finally {
            write.close();
        }
        try (TableCommitImpl commit = t.newCommit(user)) {
            commit.commit(messages);
        }
        return map("tasks", tasks.size(), "latestSnapshot", t.snapshotManager().latestSnapshotId());
    }

    /** A row as {column: value}: booleans and numbers as they are, the rest cast to STRING. */
    static Map<String, Object> named(InternalRow row, RowType type) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < type.getFieldCount(); i++) {
            DataType ft = type.getTypeAt(i);
            Object v = InternalRow.createFieldGetter(ft, i).getFieldOrNull(row);
            m.put(type.getFieldNames().get(i), value(v, ft));
        }
        return m;
    }

    /** A value as JSON-able Java: VARIANT as its JSON text, arrays and rows holding VARIANT
     * as lists and maps of their values, the rest as named() says. */
    static Object value(Object v, DataType ft) {
        if (v == null) {
            return null;
        }
        switch (ft.getTypeRoot()) {
            case BOOLEAN: case TINYINT: case SMALLINT: case INTEGER: case BIGINT:
            case FLOAT: case DOUBLE:
                return v;
            case VARIANT:
                return ((Variant) v).toJson();
            case BLOB:
                return new String(((Blob) v).toData(), StandardCharsets.UTF_8);
            case ARRAY:
                DataType et = ((org.apache.paimon.types.ArrayType) ft).getElementType();
                if (et.getTypeRoot() == DataTypeRoot.VARIANT) {
                    org.apache.paimon.data.InternalArray a = (org.apache.paimon.data.InternalArray) v;
                    List<Object> l = new ArrayList<>();
                    for (int j = 0; j < a.size(); j++) {
                        l.add(a.isNullAt(j) ? null : a.getVariant(j).toJson());
                    }
                    return l;
                }
                break;
            case ROW:
                RowType rt = (RowType) ft;
                if (rt.getFieldTypes().stream().anyMatch(t -> t.getTypeRoot() == DataTypeRoot.VARIANT)) {
                    return named((InternalRow) v, rt);
                }
                break;
            default:
                break;
        }
        @SuppressWarnings("unchecked")
        CastExecutor<Object, Object> toString =
                (CastExecutor<Object, Object>) CastExecutors.resolve(ft, DataTypes.STRING());
        return toString == null ? v.toString() : toString.cast(v).toString();
    }

    static Map<String, String> strings(JsonNode node) {
        Map<String, String> m = new HashMap<>();
        node.fieldNames().forEachRemaining(k -> m.put(k, node.get(k).asText()));
        return m;
    }

    static List<String> list(JsonNode node) {
        List<String> l = new ArrayList<>();
        node.forEach(n -> l.add(n.asText()));
        return l;
    }

    static Map<String, Object> map(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }
}
