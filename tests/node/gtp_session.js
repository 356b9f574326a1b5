// Drives a GTP engine with Sabaki's own client library (@sabaki/gtp) as Sabaki does, and reads
// its printsgf with @sabaki/sgf. Usage: node gtp_session.js '["python", "-m", "alphago_jax.cli", "gtp"]'
// Prints one JSON object: each step's response ({content, error}) and the analysis lines seen.
const {Controller} = require('@sabaki/gtp')
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

async function analysis(controller, name, args, stop) {
  // Starts a streamed analysis, waits for two `info` lines, then stops it with `stop` (the next
  // command, or an empty line) and returns its response and lines.
  const lines = []
  let enough
  const seen = new Promise(resolve => (enough = resolve))
  const response = controller.sendCommand({name, args}, ({line, end}) => {
    if (line.startsWith('info ')) lines.push(line)
    if (lines.length >= 2 || end) enough()  // an early end (an error) is reported as it is
  })
  await seen
  const next = await stop()
  const r = await response
  return {content: r.content, error: !!r.error, lines, next}
}

async function main() {
  const [path, ...args] = JSON.parse(process.argv[2])
  const controller = new Controller(path, args, {env: process.env})
  const stderr = []
  controller.on('stderr', ({content}) => stderr.push(content))
  controller.start()
  const send = async (name, args = []) => {
    const r = await controller.sendCommand({name, args})
    return {content: r.content, error: !!r.error}
  }
  const out = {}
  // Sabaki's start: identification, all at once.
  const [name, version, protocol, commands] = await Promise.all(
    ['name', 'version', 'protocol_version', 'list_commands'].map(c => send(c)))
  Object.assign(out, {name, version, protocol, commands})
  for (const [key, name, args] of [['boardsize', 'boardsize', ['5']], ['clear_board', 'clear_board', []],
                                   ['komi', 'komi', ['7.5']], ['play', 'play', ['B', 'C3']],
                                   ['genmove', 'genmove', ['W']]]) {
    out[key] = await send(name, args)
  }
  // Sabaki stops an analysis by sending its next command (protocol_version while busy) ...
  out.lz = await analysis(controller, 'lz-analyze', ['B', '10'], () => send('protocol_version'))
  // ... and KataGo's documentation also allows an empty line (written to the engine's input as it
  // is: this release of @sabaki/gtp has no call for it).
  out.analyze = await analysis(controller, 'analyze', ['B', '10', 'ownership', 'true'], async () => {
    controller.process.stdin.write('\n')
    return null
  })
  out.after = await send('name')
  out.printsgf = await send('printsgf')
  out.sgf = sgf.parse(out.printsgf.content).map(mainLine)
  // The engine quits while its input is still open, as under Sabaki: it must exit cleanly.
  const stopped = new Promise(resolve => controller.once('stopped', ({signal}) => resolve(signal)))
  await controller.stop(10000)
  out.exit = await stopped  // @sabaki/gtp passes the process's exit code as `signal`
  out.stderr = stderr
  console.log(JSON.stringify(out))
}

main().catch(err => {
  console.error(err && err.stack ? err.stack : String(err))
  process.exit(1)
})
