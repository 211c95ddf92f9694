package config

import (
	"os"
	"strings"
	"testing"
)

// The README's settings table must name every setting.
func TestREADMEListsEverySetting(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var c Config
	for _, s := range c.settings() {
		if !strings.Contains(string(readme), "| `"+s.env+"` |") {
			t.Errorf("README.md's settings table has no row for %s", s.env)
		}
	}
}
