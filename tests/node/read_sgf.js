// Reads SGF files with Sabaki's parser (@sabaki/sgf). Usage: node read_sgf.js FILE...
// Prints a JSON list, one entry per file: {file, games: [{root: <root properties>, moves: [[B|W, value]...]}]}
// (the main line: each node's first child).
const sgf = require('@sabaki/sgf')

function mainLine(root) {
  const moves = []
  for (let node = root.children[0]; node != null; node = node.children[0]) {
    for (const colour of ['B', 'W']) {
      if (node.data[colour] != null) moves.push([colour, node.data[colour][0]])
    }
  }
  return {root: root.data, moves}
}

const out = process.argv.slice(2).map(file => ({file, games: sgf.parseFile(file).map(mainLine)}))
console.log(JSON.stringify(out))
