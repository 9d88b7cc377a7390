// Every component library lists this file so that none is ever empty while others are written.
