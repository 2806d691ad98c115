// Command genfeeds writes the benchmark feeds (feedgen's shapes) to files,
// so that bench.js parses exactly what BenchmarkParse parses.
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
	for _, s := range feedgen.Shapes {
		for _, n := range s.Events {
			path := filepath.Join(*dir, fmt.Sprintf("%s-%d.ics", s.Name, n))
			if err := os.WriteFile(path, s.Generate(n), 0o644); err != nil {
				log.Fatal(err)
			}
			fmt.Println(path)
		}
	}
}
