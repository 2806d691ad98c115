// Command instr generates one feedgen shape and parses it with one of the
// benchmarked parsers a number of times: instructions.sh counts its
// instructions with zero parses and with some, and reports the difference
// per event.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"

	"github.com/calsyncd/calsyncd/bench/goparsers"
	"github.com/calsyncd/calsyncd/internal/feed/feedgen"
)

func main() {
	parser := flag.String("parser", "calsyncd", "calsyncd, golang-ical or go-ical")
	shape := flag.String("shape", "mixed", "a feedgen shape")
	events := flag.Int("events", 1000, "events in the feed")
	loops := flag.Int("loops", 1, "parses (0: generate only, the baseline)")
	list := flag.Int("list", 0, "print each shape and parser with its benchmark sizes divided by this, and exit")
	flag.Parse()
	if *list > 0 {
		for _, s := range feedgen.Shapes {
			for _, n := range s.Events {
				for _, p := range goparsers.Parsers {
					fmt.Println(s.Name, max(1, n / *list), p.Name)
				}
			}
		}
		return
	}
	if err := run(*parser, *shape, *events, *loops); err != nil {
		fmt.Fprintln(os.Stderr, "instr:", err)
		os.Exit(1)
	}
}

func run(parser, shape string, events, loops int) error {
	p, err := goparsers.Find(parser)
	if err != nil {
		return err
	}
	for _, s := range feedgen.Shapes {
		if s.Name != shape {
			continue
		}
		data := s.Generate(events)
		// A collection after the feed is made and one after the last
		// parse: the run with no parse and the runs with some start
		// from the same heap, and each pays for collecting the garbage
		// it made, whenever the collector would have run.
		runtime.GC()
		for range loops {
			if _, err := p.Parse(data); err != nil {
				return err
			}
		}
		if loops > 0 {
			runtime.GC()
		}
		fmt.Printf("%s %s events=%d bytes=%d loops=%d\n", parser, shape, events, len(data), loops)
		return nil
	}
	return fmt.Errorf("no shape %q", shape)
}
