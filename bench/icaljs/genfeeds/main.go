// Command genfeeds writes the benchmark feeds (feedgen) to files, so that
// bench.js parses exactly what BenchmarkParse parses.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/calsyncd/calsyncd/internal/feed/feedgen"
)

func main() {
	dir := flag.String("o", ".", "output directory")
	flag.Parse()
	for _, n := range []int{10_000, 100_000} {
		path := filepath.Join(*dir, fmt.Sprintf("bench-%d.ics", n))
		if err := os.WriteFile(path, feedgen.Generate(n), 0o644); err != nil {
			log.Fatal(err)
		}
		fmt.Println(path)
	}
}
