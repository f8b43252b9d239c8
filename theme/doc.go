// Package theme holds the console's Lip Gloss styles and palettes (dark, light and no colour,
// with NO_COLOR respected). It is the only place colours are chosen; tui/ takes a Styles value
// and never builds a style of its own. Of hourglass's packages it imports none.
package theme
