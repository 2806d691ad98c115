package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkPruneRuns is a year of hourly runs of 20 subscriptions (175,200
// rows), pruned to the default retention (90 days, 500 runs). It reports
// the runs kept per subscription (a year's 8,760 without retention),
// the table's bytes per run, and what a year of 1,000 hourly
// subscriptions costs the database without and with retention.
//
// Run: go test ./internal/store -run '^$' -bench PruneRuns -benchtime 1x
func BenchmarkPruneRuns(b *testing.B) {
	const subs, perSub = 20, 365 * 24
	var kept, deleted int
	var bytesPerRun float64
	for b.Loop() {
		b.StopTimer()
		s, err := Open(context.Background(), "sqlite", filepath.Join(b.TempDir(), "calsyncd.db"))
		if err != nil {
			b.Fatal(err)
		}
		now := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
		s.Now = func() time.Time { return now }
		bytesPerRun = fillRuns(b, s, subs, perSub, now)
		b.StartTimer()
		if deleted, err = s.PruneRuns(context.Background(), 90*24*time.Hour, 500); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := s.read.QueryRow(`SELECT COUNT(*) FROM runs`).Scan(&kept); err != nil {
			b.Fatal(err)
		}
		s.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(kept)/subs, "runs-kept/sub")
	b.ReportMetric(float64(deleted)/subs, "runs-pruned/sub")
	b.ReportMetric(bytesPerRun, "bytes/run")
	b.ReportMetric(bytesPerRun*perSub*1000/(1<<30), "GiB/year@1000subs-unpruned")
	b.ReportMetric(bytesPerRun*float64(kept)/subs*1000/(1<<20), "MiB@1000subs-pruned")
}

// fillRuns writes a year of finished hourly runs per subscription, ending
// at now, and returns the database's bytes per run.
func fillRuns(b *testing.B, s *Store, subs, perSub int, now time.Time) float64 {
	ctx := context.Background()
	tx, err := s.begin(ctx)
	if err != nil {
		b.Fatal(err)
	}
	for i := range subs {
		id := string(rune('a'+i)) + "-sub"
		if _, err := tx.ExecContext(ctx, `INSERT INTO subscriptions (id, calendar, account, created_at, updated_at) VALUES (?, 'c', 'default', 0, 0)`, id); err != nil {
			b.Fatal(err)
		}
		for h := perSub; h > 0; h-- {
			at := ms(now.Add(-time.Duration(h) * time.Hour))
			if _, err := tx.ExecContext(ctx, `INSERT INTO runs (subscription_id, started_at, finished_at, outcome, unchanged, error_class, error)
				VALUES (?, ?, ?, 'not_modified', 200, '', '')`, id, at, at+1500); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := s.commit(tx); err != nil {
		b.Fatal(err)
	}
	var pages, size int64
	s.read.QueryRow(`PRAGMA page_count`).Scan(&pages)
	s.read.QueryRow(`PRAGMA page_size`).Scan(&size)
	return float64(pages*size) / float64(subs*perSub)
}
