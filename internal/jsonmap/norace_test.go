//go:build !race

package jsonmap

const raceEnabled = false
