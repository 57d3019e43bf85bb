// dcmjs ships JavaScript without types; only what the DICOM sanitizer uses is declared.
declare module "dcmjs" {
  export interface DicomElement {
    vr: string
    Value?: Array<unknown>
    _rawValue?: unknown
  }
  export type DicomDataset = Record<string, DicomElement>
  export class DicomDict {
    constructor(meta: DicomDataset)
    meta: DicomDataset
    dict: DicomDataset
    write(options?: { allowInvalidVRLength?: boolean }): ArrayBuffer
  }
  const dcmjs: {
    data: {
      DicomDict: typeof DicomDict
      DicomMessage: { readFile(buffer: ArrayBuffer, options?: { ignoreErrors?: boolean }): DicomDict }
      DicomMetaDictionary: {
        dictionary: Record<string, { tag: string; vr: string; name: string } | undefined>
        denaturalizeDataset(dataset: Record<string, unknown>): DicomDataset
      }
    }
    log: { setLevel(level: string): void }
  }
  export default dcmjs
}
