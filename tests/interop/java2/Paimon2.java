// Apache Paimon 2.x (Java) driven from the interop tests: every argument after the warehouse is
// one JSON step (or @FILE holding one), run in order in one JVM; each step prints one JSON line on stdout (Paimon's own
// output goes to stderr). Compiled at test time and run by tests/interop/java2.py, which fetches
// the Paimon jar through Maven (see tests/interop/README.md).
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
//   {"op": "read", "table": "db.t", "options": {"scan.snapshot-id": "1"}}
//        every row of a batch read (table.copy(options)) -> {"rows": [{column: value}]}
//   {"op": "snapshots", "table": "db.t"}
//        -> {"snapshots": [{id, schemaId, commitKind, totalRecordCount, deltaRecordCount}]}
//   {"op": "files", "table": "db.t", "options": {...}}
//        the live data files -> {"files": [{partition, bucket, file, level, rowCount,
//        minSequenceNumber, maxSequenceNumber, schemaId}]}
//   {"op": "compact", "table": "db.t", "full": true}
//        BatchTableWrite.compact(partition, bucket, full) of every bucket with files, one commit
//        -> {"buckets", "latestSnapshot"}
//
// Input values go through Paimon's TypeUtils.castFromString (their JSON text), VARIANT values
// through GenericVariant.fromJson; output values: booleans and numbers as JSON, VARIANT as its
// toJson() text (ARRAY<VARIANT> as a list, a ROW with VARIANT fields as a map of them),
// everything else as Paimon's cast to STRING.
import java.io.File;
import java.io.PrintStream;
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
import org.apache.paimon.casting.CastExecutor;
import org.apache.paimon.casting.CastExecutors;
import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.BinaryRow;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.data.variant.GenericVariant;
import org.apache.paimon.data.variant.Variant;
import org.apache.paimon.disk.IOManager;
import org.apache.paimon.index.HashBucketAssigner;
import org.apache.paimon.io.DataFileMeta;
import org.apache.paimon.manifest.ManifestEntry;
import org.apache.paimon.options.Options;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.paimon.table.BucketMode;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.BatchTableWrite;
import org.apache.paimon.table.sink.BatchWriteBuilder;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.RowKeyExtractor;
import org.apache.paimon.table.source.ReadBuilder;
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
                out.println(JSON.writeValueAsString(step(catalog, JSON.readTree(text))));
            }
        } catch (Throwable e) {
            StringBuilder msg = new StringBuilder("Paimon2: error: " + e);
            for (Throwable c = e.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
                msg.append("\n  caused by: ").append(c);
            }
            if (System.getenv("PAIMON2_DEBUG") != null) e.printStackTrace();
            System.err.println(msg);
            rc = 1;
        }
        out.flush();
        System.exit(rc); // Paimon may leave non-daemon threads behind
    }

    static Object step(Catalog catalog, JsonNode s) throws Exception {
        String op = s.get("op").asText();
        Identifier id = Identifier.fromString(s.get("table").asText());
        if (op.equals("create")) {
            return create(catalog, id, s);
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
            case "read":
                return read(t);
            case "snapshots":
                return snapshots(t);
            case "files":
                return files(t);
            case "compact":
                return compact(t, s.path("full").asBoolean(true));
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
                    : TypeUtils.castFromString(v.asText(), ft));
        }
        return row;
    }

    static Object read(FileStoreTable t) throws Exception {
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
                    "deltaRecordCount", s.deltaRecordCount()));
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
                    "maxSequenceNumber", f.maxSequenceNumber(), "schemaId", f.schemaId()));
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
