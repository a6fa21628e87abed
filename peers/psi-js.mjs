// The @openmined/psi.js 2.0.6 peer: reads one JSON job on stdin, writes one JSON result on stdout.
// Used by lockstep's tests (known-answer vectors, cross-party rounds) and by `lockstep bench psi`.
//
//   {"op":"setup","key":HEX,"reveal":B,"fpr":F,"joiner_count":N,"format":"raw|gcs|bloom","inputs":PATH,"out":PATH}
//   {"op":"request","key":HEX,"reveal":B,"inputs":PATH,"out":PATH}
//   {"op":"respond","key":HEX,"reveal":B,"request":PATH,"out":PATH}
//   {"op":"intersect","key":HEX,"reveal":B,"setup":PATH,"response":PATH}  -> {"indices":[..],"size":N}
//   {"op":"bench","rows":N,"repeats":R}                                    -> {"setup_raw":rows/s,...}
//   {"op":"vectors","cases":[...]}                                          -> the vectors
// Inputs files hold a JSON array of strings.
import { readFileSync, writeFileSync } from 'node:fs'
import PSI from '@openmined/psi.js'

const psi = await PSI()
const job = JSON.parse(readFileSync(0, 'utf8'))
const hex = (bytes) => Buffer.from(bytes).toString('hex')
const unhex = (text) => Uint8Array.from(Buffer.from(text, 'hex'))
const read = (path) => Uint8Array.from(readFileSync(path))
const inputs = (path) => JSON.parse(readFileSync(path, 'utf8'))
const formats = { raw: psi.dataStructure.Raw, gcs: psi.dataStructure.GCS, bloom: psi.dataStructure.BloomFilter }
const server = (key, reveal) => psi.server.createFromKey(unhex(key), reveal)
const client = (key, reveal) => psi.client.createFromKey(unhex(key), reveal)

function intersect(c, setupBytes, responseBytes, reveal) {
  const setup = psi.serverSetup.deserializeBinary(setupBytes)
  const response = psi.response.deserializeBinary(responseBytes)
  const size = c.getIntersectionSize(setup, response)
  const indices = reveal ? c.getIntersection(setup, response).sort((a, b) => a - b) : null
  return { indices, size }
}

function rate(rows, repeats, body) {
  let best = Infinity
  let result
  for (let r = 0; r < repeats; r++) {
    const start = process.hrtime.bigint()
    result = body()
    best = Math.min(best, Number(process.hrtime.bigint() - start) / 1e9)
  }
  return { rate: rows / best, result }
}

const ops = {
  setup(j) {
    const s = server(j.key, j.reveal)
    const msg = s.createSetupMessage(j.fpr, j.joiner_count, inputs(j.inputs), formats[j.format])
    writeFileSync(j.out, msg.serializeBinary())
    return {}
  },
  request(j) {
    writeFileSync(j.out, client(j.key, j.reveal).createRequest(inputs(j.inputs)).serializeBinary())
    return {}
  },
  respond(j) {
    const s = server(j.key, j.reveal)
    writeFileSync(j.out, s.processRequest(psi.request.deserializeBinary(read(j.request))).serializeBinary())
    return {}
  },
  intersect(j) {
    return intersect(client(j.key, j.reveal), read(j.setup), read(j.response), j.reveal)
  },
  bench(j) {
    const n = j.rows
    const repeats = j.repeats ?? 1
    const starterValues = Array.from({ length: n }, (_, i) => `starter-${i}@example.org`)
    const joinerValues = Array.from({ length: n }, (_, i) => `starter-${i + n / 2}@example.org`)
    const s = psi.server.createWithNewKey(true)
    const c = psi.client.createWithNewKey(true)
    const out = {}
    let setup
    for (const [name, format] of Object.entries(formats)) {
      const m = rate(n, repeats, () => s.createSetupMessage(1e-6, n, starterValues, format))
      out[`setup_${name}`] = m.rate
      if (name === 'raw') setup = m.result
    }
    const request = rate(n, repeats, () => c.createRequest(joinerValues))
    out.request = request.rate
    const response = rate(n, repeats, () => s.processRequest(request.result))
    out.response = response.rate
    const found = rate(n, repeats, () => c.getIntersection(setup, response.result))
    out.intersect_raw = found.rate
    out.matches = found.result.length
    return out
  },
  vectors(j) {
    const out = []
    for (const v of j.cases) {
      const s = server(v.starter_key, true)
      const c = client(v.joiner_key, true)
      const sSize = server(v.starter_key, false)
      const cSize = client(v.joiner_key, false)
      const setups = {}
      for (const [name, format] of Object.entries(formats)) {
        setups[name] = s.createSetupMessage(v.fpr, v.joiner_count, v.starter_inputs, format).serializeBinary()
      }
      const request = c.createRequest(v.joiner_inputs)
      const response = s.processRequest(request)
      const requestSize = cSize.createRequest(v.joiner_inputs)
      const responseSize = sSize.processRequest(requestSize)
      const found = {}
      for (const name of Object.keys(formats)) {
        found[name] = intersect(c, setups[name], response.serializeBinary(), true)
        found[`${name}_size_only`] = intersect(cSize, setups[name], responseSize.serializeBinary(), false).size
      }
      out.push({
        ...v,
        setup: Object.fromEntries(Object.entries(setups).map(([k, b]) => [k, hex(b)])),
        request: hex(request.serializeBinary()),
        response: hex(response.serializeBinary()),
        request_size_only: hex(requestSize.serializeBinary()),
        response_size_only: hex(responseSize.serializeBinary()),
        intersection: Object.fromEntries(Object.keys(formats).map((k) => [k, found[k].indices])),
        intersection_size: Object.fromEntries(Object.keys(formats).map((k) => [k, found[`${k}_size_only`]])),
        joiner_key_bytes: hex(c.getPrivateKeyBytes()),
        starter_key_bytes: hex(s.getPrivateKeyBytes()),
      })
    }
    return { peer: '@openmined/psi.js 2.0.6', cases: out }
  },
}

try {
  const op = ops[job.op]
  if (!op) throw new Error(`unknown op ${job.op}`)
  process.stdout.write(JSON.stringify(op(job)))
} catch (error) {
  process.stdout.write(JSON.stringify({ error: String(error && error.message ? error.message : error) }))
  process.exitCode = 1
}
