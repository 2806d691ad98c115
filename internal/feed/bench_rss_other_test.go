//go:build !linux

package feed_test

import "errors"

func ownPeakRSS() (float64, error) {
	return 0, errors.New("peak RSS is measured on Linux only")
}
