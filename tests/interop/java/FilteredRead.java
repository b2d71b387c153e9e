// Filtered reads through Paimon's Java API: for each "column=value" argument one line
// {"files": <data files the plan keeps>, "keys": [<first column of every row read>]}.
// Compiled and run by tests/interop/helpers.py (run_java) against the
// paimon-oracle's Paimon jars.
import java.util.ArrayList;
import java.util.List;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.fs.Path;
import org.apache.paimon.predicate.Predicate;
import org.apache.paimon.predicate.PredicateBuilder;
import org.apache.paimon.table.Table;
import org.apache.paimon.table.source.DataSplit;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.table.source.Split;
import org.apache.paimon.types.DataTypeRoot;

public class FilteredRead {
    // args: warehouse, db.table, then "column=value" (an INT or a STRING literal)
    public static void main(String[] args) throws Exception {
        Catalog catalog = CatalogFactory.createCatalog(CatalogContext.create(new Path(args[0])));
        Table table = catalog.getTable(Identifier.fromString(args[1]));
        PredicateBuilder builder = new PredicateBuilder(table.rowType());
        for (int i = 2; i < args.length; i++) {
            String[] query = args[i].split("=", 2);
            int index = builder.indexOf(query[0]);
            DataTypeRoot root = table.rowType().getTypeAt(index).getTypeRoot();
            Object literal =
                    root == DataTypeRoot.INTEGER
                            ? (Object) Integer.valueOf(query[1])
                            : BinaryString.fromString(query[1]);
            Predicate predicate = builder.equal(index, literal);
            ReadBuilder read = table.newReadBuilder().withFilter(predicate);
            List<Split> splits = read.newScan().plan().splits();
            int files = 0;
            for (Split split : splits) {
                files += ((DataSplit) split).dataFiles().size();
            }
            List<Integer> keys = new ArrayList<>();
            read.newRead().createReader(splits).forEachRemaining(row -> keys.add(row.getInt(0)));
            System.out.println("{\"files\": " + files + ", \"keys\": " + keys + "}");
        }
    }
}
