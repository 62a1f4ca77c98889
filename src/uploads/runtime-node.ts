/**
 * How files are read on Node (package.json `imports`: `#uploads-runtime` under the `node` condition):
 * paths through `node:fs`, an `fs.ReadStream`'s file and size, and formats by file-type.
 */
export {
  fileOfReadStream as fileOfStream,
  nodeDetect as detect,
  nodePathSource as pathSource,
} from './node-files.js';
