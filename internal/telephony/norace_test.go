//go:build !race

package telephony_test

const raceEnabled = false
