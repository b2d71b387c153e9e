// Branch operations through Paimon 0.9's Java API, in one JVM: the oracle has no branch
// command. Each argument after the warehouse is one step "op|table|..." ('|'-separated),
// run in order; each step prints one JSON line. Compiled and run by
// tests/interop/helpers.py (run_java) against the paimon-oracle's Paimon jars.
//
//   create|db.t|b            FileStoreTable.createBranch(b): an empty branch (latest schema)
//   create|db.t|b|tag        FileStoreTable.createBranch(b, tag): from the tag
//   write|IDENT|JSON         one batch write + commit of JSON rows (objects by column name)
//                            to IDENT through the catalog, e.g. db.t$branch_b
//   switch-write|db.t|b|JSON the same through FileStoreTable.switchToBranch(b)
//   fast-forward|db.t|b      FileStoreTable.fastForward(b)
//   delete|db.t|b            FileStoreTable.deleteBranch(b)
//   branches|db.t            BranchManager.branches(), sorted
//   read|IDENT               every row of IDENT (read through the catalog), sorted by text
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.fs.Path;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.BatchTableWrite;
import org.apache.paimon.table.sink.BatchWriteBuilder;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.types.RowType;
import org.apache.paimon.utils.InternalRowUtils;
import org.apache.paimon.utils.TypeUtils;

public class Branches {
    static final ObjectMapper JSON = new ObjectMapper();

    public static void main(String[] args) throws Exception {
        Catalog catalog = CatalogFactory.createCatalog(CatalogContext.create(new Path(args[0])));
        for (int i = 1; i < args.length; i++) {
            String[] step = args[i].split("\\|", 4);
            String op = step[0];
            // A fresh handle per step: each sees what the steps before committed.
            FileStoreTable table =
                    (FileStoreTable) catalog.getTable(Identifier.fromString(step[1]));
            String out;
            switch (op) {
                case "create":
                    if (step.length > 3) {
                        table.createBranch(step[2], step[3]);
                    } else {
                        table.createBranch(step[2]);
                    }
                    out = "{\"created\": " + JSON.writeValueAsString(step[2]) + "}";
                    break;
                case "write":
                    out = write(table, step[2]);
                    break;
                case "switch-write":
                    out = write(table.switchToBranch(step[2]), step[3]);
                    break;
                case "fast-forward":
                    table.fastForward(step[2]);
                    out = "{\"fast_forwarded\": " + JSON.writeValueAsString(step[2]) + "}";
                    break;
                case "delete":
                    table.deleteBranch(step[2]);
                    out = "{\"deleted\": " + JSON.writeValueAsString(step[2]) + "}";
                    break;
                case "branches":
                    List<String> names = new ArrayList<>(table.branchManager().branches());
                    Collections.sort(names);
                    out = "{\"branches\": " + JSON.writeValueAsString(names) + "}";
                    break;
                case "read":
                    out = "{\"rows\": " + JSON.writeValueAsString(read(table)) + "}";
                    break;
                default:
                    throw new IllegalArgumentException("unknown step " + op);
            }
            System.out.println(out);
        }
    }

    static String write(FileStoreTable table, String rows) throws Exception {
        RowType type = table.rowType();
        BatchWriteBuilder builder = table.newBatchWriteBuilder();
        int count = 0;
        try (BatchTableWrite write = builder.newWrite();
                BatchTableCommit commit = builder.newCommit()) {
            for (JsonNode node : JSON.readTree(rows)) {
                GenericRow row = new GenericRow(type.getFieldCount());
                for (int f = 0; f < type.getFieldCount(); f++) {
                    JsonNode v = node.get(type.getFieldNames().get(f));
                    row.setField(
                            f,
                            v == null || v.isNull()
                                    ? null
                                    : TypeUtils.castFromString(v.asText(), type.getTypeAt(f)));
                }
                write.write(row);
                count++;
            }
            commit.commit(write.prepareCommit());
        }
        long latest = table.snapshotManager().latestSnapshotId();
        return "{\"rows\": " + count + ", \"latestSnapshot\": " + latest + "}";
    }

    static List<List<String>> read(FileStoreTable table) throws Exception {
        RowType type = table.rowType();
        ReadBuilder builder = table.newReadBuilder();
        List<List<String>> rows = new ArrayList<>();
        try (org.apache.paimon.reader.RecordReader<InternalRow> reader =
                builder.newRead().createReader(builder.newScan().plan())) {
            Iterator<InternalRow> it = reader.toCloseableIterator();
            while (it.hasNext()) {
                InternalRow row = it.next();
                List<String> values = new ArrayList<>();
                for (int f = 0; f < type.getFieldCount(); f++) {
                    Object v = InternalRowUtils.get(row, f, type.getTypeAt(f));
                    values.add(v == null ? null : v.toString());
                }
                rows.add(values);
            }
        }
        rows.sort((a, b) -> String.valueOf(a).compareTo(String.valueOf(b)));
        return rows;
    }
}
